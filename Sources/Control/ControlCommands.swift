import CaptureServer
import Foundation
import JournalStorage
import NIOConcurrencyHelpers

/// What the daemon says about itself in `status`.
public struct DaemonDescription: Sendable {
    public var pid: Int32
    public var started: Double
    public var socket: String
    public var dataDirectory: String
    public var unknownDevicePolicy: UnknownDevicePolicy

    public init(pid: Int32, started: Double, socket: String, dataDirectory: String, unknownDevicePolicy: UnknownDevicePolicy) {
        self.pid = pid
        self.started = started
        self.socket = socket
        self.dataDirectory = dataDirectory
        self.unknownDevicePolicy = unknownDevicePolicy
    }
}

/// Carries out control requests against the session registry.
public final class ControlCommands: Sendable {
    private let registry: SessionRegistry
    private let counters: CaptureCounters
    private let description: DaemonDescription
    private let listen = NIOLockedValueBox<ListenAddress?>(nil)
    private let zeroconfState = NIOLockedValueBox<@Sendable () -> String>({ "off" })

    public init(registry: SessionRegistry, counters: CaptureCounters, description: DaemonDescription) {
        self.registry = registry
        self.counters = counters
        self.description = description
    }

    /// Called once the capture server listens, so that `status` shows the real port.
    public func listening(on address: ListenAddress) {
        listen.withLockedValue { $0 = address }
    }

    /// Where `status` reads the Zeroconf announcement's state from.
    public func reportZeroconf(_ state: @escaping @Sendable () -> String) {
        zeroconfState.withLockedValue { $0 = state }
    }

    public func execute(_ request: ControlRequest, writer: ControlReplyWriter) async throws {
        do {
            try await run(request, writer: writer)
        } catch let error as ControlUsageError {
            try await writer.fail(error.description)
        } catch {
            try await writer.fail("\(error)")
        }
    }

    private func run(_ request: ControlRequest, writer: ControlReplyWriter) async throws {
        let now = Date().timeIntervalSince1970
        switch request.command {
        case .start:
            let record = try await registry.start(name: request.name, testUser: request.user, notes: request.notes,
                                                  sensors: request.sensors ?? [], device: request.device, now: now)
            try await writer.succeed(record)
        case .stop:
            if request.all == true {
                try await writer.succeed(try await registry.stopAll(now: now))
            } else {
                try await writer.succeed([try await registry.stop(try sessionKey(request), now: now)])
            }
        case .status:
            try await writer.succeed(StatusReport(
                version: MuEvalVersion.current, pid: description.pid, started: description.started,
                listen: listen.withLockedValue { $0 }, zeroconf: zeroconfState.withLockedValue { $0 }(), socket: description.socket,
                dataDirectory: description.dataDirectory, unknownDevicePolicy: description.unknownDevicePolicy,
                sessions: registry.openSessions().map(\.snapshot), counters: counters.snapshot()))
        case .sessions:
            try await writer.succeed(try registry.sessions())
        case .devices:
            try await writer.succeed(try registry.devices())
        case .events:
            let record = try registry.find(try sessionKey(request))
            let limit = request.limit ?? 100
            let reader = try SessionReader(path: record.path)
            try await writer.succeed(try reader.events(classes: request.classes ?? [], last: limit > 0 ? limit : nil))
        case .export:
            let record = try registry.find(try sessionKey(request))
            let format = request.format ?? .plist
            try await export(record, format: format, classes: request.classes ?? [], writer: writer)
        case .delete:
            try await writer.succeed(try registry.delete(try sessionKey(request)))
        }
    }

    /// Streams the export as text chunks, a page of events at a time, so that no session has to fit in memory.
    private func export(_ record: SessionRecord, format: ExportFormat, classes: [String], writer: ControlReplyWriter) async throws {
        let exporter = try JournalExporter(path: record.path, format: format)
        try await writer.chunk(String(decoding: exporter.header, as: UTF8.self))
        var cursor: Int64 = 0
        var events: Int64 = 0
        while true {
            var page: [UInt8] = []
            guard let last = try exporter.exportPage(classes: classes, after: cursor, limit: 500, to: { page += $0; events += 1 }) else { break }
            cursor = last
            try await writer.chunk(String(decoding: page, as: UTF8.self))
        }
        try await writer.chunk(String(decoding: exporter.footer, as: UTF8.self))
        try await writer.succeed(ExportSummary(session: record.id, format: format, events: events))
    }

    private func sessionKey(_ request: ControlRequest) throws -> String {
        guard let session = request.session, !session.isEmpty else {
            throw ControlUsageError("\(request.command.rawValue) needs a session id or name")
        }
        return session
    }
}

struct ControlUsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
