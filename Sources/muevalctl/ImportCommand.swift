public import ArgumentParser
internal import ControlProtocol
internal import Foundation
internal import JournalStorage
internal import ReplicationArchive
internal import SessionImport
public import SessionModel

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make sessions of files recorded without a network: IMUT logs, GPX tracks, muEval exports.",
        discussion: """
            Each log, track or export becomes a stopped session, analysed, reported and replayed like a recorded one; \
            recordings an IMUT log names (its screen or front-camera video) are attached when given with it. \
            The format is recognised from each file's content. Goes through the running muevald; with --data-dir, \
            works on the data directory of a muevald that is not running (docs/IMPORT.md).
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Files to import.", valueName: "FILE")) var files: [String]
    @Option(help: "A name for the session (default: the track's name or the file's).") var name: String?
    @Option(help: ArgumentHelp("The test user.", valueName: "NAME")) var user: String?
    @OptionGroup var study: AssignmentOptions
    @Option(help: "imut, gpx, jsonl or plist (default: recognised from the content).") var format: ImportFormat?
    @Option(help: ArgumentHelp("Merge a GPX track or IMUT log into this stopped session on the absolute time axis.", valueName: "SESSION"))
    var into: String?
    @Flag(help: "Import a file again that was imported before.") var again = false
    @Option(name: .customLong("data-dir"), help: ArgumentHelp("Import into this data directory directly, with no muevald running on it.", valueName: "DIR"))
    var dataDirectory: String?
    @Option(help: ArgumentHelp("With --data-dir: the lab the directory belongs to, its muevald's storage.postgres.lab (default: the host name). An export of another lab gets a uuid of its own.", valueName: "NAME"))
    var lab: String?

    func run() async throws {
        // Opened here, with this user's rights, and passed open: muevald reads nothing its client may not.
        let opened: [ImportFile]
        do {
            opened = try files.map { given throws(ImportError) in try ImportFile.open(URL(fileURLWithPath: given).standardizedFileURL.path) }
        } catch {
            throw Failure(error.description)
        }
        // Open until the import is done: muevald receives their descriptors while it runs.
        defer { withExtendedLifetime(opened) {} }
        let outcomes: [ImportOutcome]
        if let dataDirectory {
            outcomes = try importOffline(opened, into: URL(fileURLWithPath: dataDirectory).standardizedFileURL.path)
        } else {
            outcomes = try await global.client.call(ControlRequest.Import(
                files: opened.map(\.name), format: format, name: name, user: user, assignment: study.assignment, into: into, again: again),
                passing: opened.map(\.descriptor))
        }
        try global.show(outcomes, human: ControlOutput.imported)
    }

    /// The same import, done here on a data directory no muevald holds.
    private func importOffline(_ files: [ImportFile], into directory: String) throws -> [ImportOutcome] {
        // A new directory becomes a data directory; one with other things in it is left alone.
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        guard contents.isEmpty || contents.contains(Catalog.fileName) else {
            throw Failure("\(directory) is not a muEval data directory (it has no \(Catalog.fileName))")
        }
        let lock = try DataDirectoryLock(directory: directory)
        defer { withExtendedLifetime(lock) {} }
        let catalog = try Catalog(directory: directory)
        let target = try into.map { key in
            guard let session = try catalog.sessions().first(where: { String($0.id) == key || $0.name == key }) else {
                throw Failure("no session \(key) in \(directory)")
            }
            return session
        }
        let request = ImportRequest(files: files, format: format, name: name, testUser: user, assignment: study.assignment, into: target,
                                    again: again)
        return try SessionImporter(catalog: catalog, limits: ImportLimits(), lab: lab ?? ReplicationSettings.defaultLab)
            .run(request, now: Date().timeIntervalSince1970)
    }
}

extension ImportFormat: ExpressibleByArgument {}
