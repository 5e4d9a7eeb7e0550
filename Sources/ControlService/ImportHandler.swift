internal import ControlProtocol
internal import NIOPosix
internal import SessionCore
internal import SessionImport
internal import SessionModel

/// `import`: the files come open from the client, which may read them; read on a thread of its own
/// (a file can take minutes), then announced like a stop.
struct ImportHandler: Sendable {
    let registry: SessionRegistry
    let importer: SessionImporter

    func run(_ request: ControlRequest.Import, passedBy client: PassedFiles?, now: Double) async throws -> [ImportOutcome] {
        guard request.descriptors, let client else {
            throw ControlUsageError("muevald opens no file for its clients: pass them open (\"descriptors\": true, docs/CONTROL.md); "
                                    + "an older muevalctl must be updated to this muevald's version")
        }
        guard (1...DescriptorPassing.maxDescriptors).contains(request.files.count) else {
            throw ControlUsageError("import takes 1 to \(DescriptorPassing.maxDescriptors) files at a time")
        }
        let into = try request.into.map { try registry.find($0) }
        let descriptors = try await client.receive(request.files.count)
        // Every descriptor is wrapped before any failure is thrown, so that each is closed.
        let opened = zip(request.files, descriptors).map { name, descriptor in
            Result { () throws(ImportError) in try ImportFile(name: name, descriptor: descriptor) }
        }
        let files = try opened.map { try $0.get() }
        let importRequest = ImportRequest(files: files, format: request.format, name: request.name, testUser: request.user,
                                          assignment: request.assignment, into: into, again: request.again)
        let outcomes = try await NIOThreadPool.singleton.runIfActive { [importer] in try importer.run(importRequest, now: now) }
        for outcome in outcomes { registry.imported(outcome.session, from: outcome.file, now: now) }
        return outcomes
    }
}
