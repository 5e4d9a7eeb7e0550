internal import ArgumentParser
internal import Foundation
internal import JournalStorage
internal import ReplicationArchive
internal import SessionModel

/// `--from postgres://…`: read the shared PostgreSQL every lab replicates into (docs/POSTGRES.md)
/// instead of asking this machine's muevald.
struct SharedDatabaseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("""
        Read from the shared PostgreSQL instead of muevald: postgres://USER@HOST[:PORT]/DATABASE, or `postgres` \
        for $MUEVAL_STORAGE_POSTGRES_URL (muevald's storage.postgres.url).
        """, valueName: "URL"))
    var from: String?
    @Option(name: .customLong("password-file"), help: ArgumentHelp("With --from: a file whose first line is the password.", valueName: "FILE"))
    var passwordFile: String?

    /// `body`'s result on the archive `--from` names, connected for it and closed after; nil without `--from`.
    func withArchive<T>(_ body: (PostgresArchive) async throws -> T) async throws -> T? {
        guard let archive = try await open() else { return nil }
        do {
            let result = try await body(archive)
            await archive.close()
            return result
        } catch {
            await archive.close()
            throw error
        }
    }

    private func open() async throws -> PostgresArchive? {
        guard let from else { return nil }
        let environment = ProcessInfo.processInfo.environment
        let url = from == "postgres" ? environment["MUEVAL_STORAGE_POSTGRES_URL"] ?? "" : from
        guard !url.isEmpty else {
            throw Failure("--from postgres reads MUEVAL_STORAGE_POSTGRES_URL, which is not set: give the URL, postgres://USER@HOST/DATABASE")
        }
        do {
            return try await PostgresArchive.open(url: url, passwordFile: passwordFile ?? environment["MUEVAL_STORAGE_POSTGRES_PASSWORD_FILE"])
        } catch {
            throw Failure("\(error)")
        }
    }
}

extension PostgresArchive {
    /// Study `name` from every lab, its sessions written into session files in a temporary folder
    /// for `body` (removed afterwards).
    func withStudy<T>(_ name: String, _ body: (StudyData) async throws -> T) async throws -> T {
        guard let found = try await study(name) else {
            throw Failure("the shared database has no study \"\(name)\"; a lab's muevald replicates its studies once it has one")
        }
        return try await withSessionFiles(found.sessions.map(\.uuid)) { files in
            var records: [SessionRecord] = []
            for (session, file) in zip(found.sessions, files) {
                guard var record = try SessionReader(path: file).session() else { continue }
                record.assignment = session.study.flatMap { study in
                    session.iteration.flatMap { iteration in session.participant.map { StudyAssignment(study: study, iteration: iteration, participant: $0) } }
                }
                records.append(record)
            }
            return try await body(StudyData(study: found.study, sessions: records, responses: found.responses))
        }
    }

    /// Writes the sessions `selectors` name into session files in a new temporary folder, which `body`
    /// gets; the folder is removed afterwards, whatever `body` does.
    func withSessionFiles<T>(_ selectors: [String], _ body: ([String]) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("muevalctl-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var files: [String] = []
        for selector in selectors {
            let session: SharedSession
            do { session = try await self.session(selector) } catch { throw Failure("\(error)") }
            let path = "\(folder)/\(session.uuid).sqlite"
            try await restore(session, to: path)
            files.append(path)
        }
        return try await body(files)
    }
}
