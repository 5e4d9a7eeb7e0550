internal import Foundation
package import Logging
internal import NIOConcurrencyHelpers
package import ReportCritique
internal import SessionAnalysis
package import SessionModel
internal import StudyAnalysis

/// Where a session's report stands (`GET /api/sessions/ID/report`; a study's report says it the same way).
package struct ReportState: Codable, Sendable, Equatable {
    package enum State: String, Codable, Sendable { case none, running, ready, failed }
    package var state: State
    package var url: String?
    package var error: String?
    /// When it was written (seconds since 1970).
    package var generated: Double?

    package static let none = ReportState(state: .none)
    package static let running = ReportState(state: .running)
    package static func ready(url: String, generated: Double?) -> ReportState { ReportState(state: .ready, url: url, generated: generated) }
    package static func failed(_ error: any Error) -> ReportState { ReportState(state: .failed, error: "\(error)") }
}

/// A report that was written, or failed.
package struct FinishedReport: Sendable, Equatable {
    package var session: Int64
    package var name: String
    package var state: ReportState
}

/// The reports of sessions: directories under `<data>/reports/<session>/<name>/`, written in the
/// background, one at a time per report (a second request for one waits for the same task), at most
/// `reports.max_concurrent` at once (`ReportSlots`; a report waiting its turn says `running`). The
/// daemon's automatic report (`AutomaticReports`) and the console's reports on request both write
/// here; the console serves the directories as they are.
package final class SessionReports: Sendable {
    /// The report of every section, the one written when a session stops.
    package static let defaultName = "default"

    private let root: String
    private let logger: Logger
    /// Shared with the study reports written at a study's completion.
    package let slots: ReportSlots
    private let running = NIOLockedValueBox<[String: Task<ReportState, Never>]>([:])
    private let problemMarks = NIOLockedValueBox<[Int64: [ProblemMark]]>([:])
    /// The last failure of each report, until it is written again: the console says why there is none.
    private let failures = NIOLockedValueBox<[String: ReportState]>([:])
    private let listeners = NIOLockedValueBox<(next: UInt64, all: [UInt64: AsyncStream<FinishedReport>.Continuation])>((0, [:]))

    /// The face scan's limits (`reports.face_*`).
    private let faceScanner: FaceScanner

    package init(dataDirectory: String, logger: Logger, slots: ReportSlots = ReportSlots(limits: ReportLimits()),
                 faceScanner: FaceScanner = FaceScanner()) {
        root = dataDirectory + "/reports"
        self.logger = logger
        self.slots = slots
        self.faceScanner = faceScanner
    }

    /// Each report written or failed from now on, until the stream is dropped.
    package func finished() -> AsyncStream<FinishedReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: FinishedReport.self, bufferingPolicy: .bufferingNewest(64))
        let id = listeners.withLockedValue { listeners in
            defer { listeners.next += 1 }
            listeners.all[listeners.next] = continuation
            return listeners.next
        }
        continuation.onTermination = { [weak self] _ in _ = self?.listeners.withLockedValue { $0.all.removeValue(forKey: id) } }
        return stream
    }

    package func directory(of session: Int64, name: String) -> String { "\(root)/\(session)/\(name)" }

    package func state(of session: Int64, name: String) -> ReportState {
        if running.withLockedValue({ $0[key(session, name)] }) != nil { return .running }
        if let failure = failures.withLockedValue({ $0[key(session, name)] }) { return failure }
        let index = directory(of: session, name: name) + "/index.html"
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: index) else { return .none }
        return .ready(url: "/sessions/\(session)/reports/\(name)/index.html",
                      generated: (attributes[.modificationDate] as? Date)?.timeIntervalSince1970)
    }

    /// The problems the last default report of the session found.
    package func problems(of session: Int64) -> [ProblemMark] {
        if let marks = problemMarks.withLockedValue({ $0[session] }) { return marks }
        let file = directory(of: session, name: Self.defaultName) + "/problems.json"
        guard let data = FileManager.default.contents(atPath: file),
              let marks = try? JSONDecoder().decode([ProblemMark].self, from: data) else { return [] }
        problemMarks.withLockedValue { $0[session] = marks }
        return marks
    }

    /// Writes the report in the background, or joins the task already writing it.
    @discardableResult
    package func write(_ record: SessionRecord, name: String = SessionReports.defaultName,
                       configuration: ReportConfiguration = ReportConfiguration()) -> Task<ReportState, Never> {
        let key = key(record.id, name)
        return running.withLockedValue { running in
            if let task = running[key] { return task }
            let task = Task { [self] in
                let result = await write(record, name: name, configuration: configuration, to: directory(of: record.id, name: name))
                self.failures.withLockedValue { $0[key] = result.state == .failed ? result : nil }
                _ = self.running.withLockedValue { $0.removeValue(forKey: key) }
                for listener in listeners.withLockedValue({ Array($0.all.values) }) {
                    listener.yield(FinishedReport(session: record.id, name: name, state: result))
                }
                return result
            }
            running[key] = task
            return task
        }
    }

    /// A deleted session's reports go with it.
    package func forget(_ session: Int64) {
        problemMarks.withLockedValue { $0[session] = nil }
        failures.withLockedValue { $0 = $0.filter { !$0.key.hasPrefix("\(session)/") } }
        try? FileManager.default.removeItem(atPath: "\(root)/\(session)")
    }

    /// The reports of sessions not among `sessions` (deleted while their deletion went unseen) go.
    package func forgetAll(except sessions: Set<Int64>) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for name in names {
            guard let session = Int64(name), !sessions.contains(session) else { continue }
            forget(session)
        }
    }

    /// A saved configuration's name as one safe path component.
    package static func directoryName(_ name: String) -> String {
        String(name.unicodeScalars.map { scalar -> Character in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || scalar == "-" || scalar == "_" ? Character(scalar) : "_"
        })
    }

    private func write(_ record: SessionRecord, name: String, configuration: ReportConfiguration, to output: String) async -> ReportState {
        let started = Date()
        do {
            // Analysis reads the whole session file and the face scan waits for its subprocess (minutes for an
            // hour of video): on the report threads of their own, never NIO's pool, which the console's SQLite
            // calls share, nor the cooperative one; and only as many at once as `reports.max_concurrent` allows.
            let marks = try await slots.run { try await BlockingWork.run { [faceScanner] in
                let analysis = try AnalyzedSession(path: record.path, options: configuration.options)
                var writer = ReportWriter(configuration: configuration)
                writer.faceScanner = faceScanner
                _ = try writer.write([analysis], to: output)
                let marks = analysis.problems.map { ProblemMark(t: $0.time, title: $0.kind.rawValue + ($0.view.map { " in " + $0 } ?? "")) }
                try JSONEncoder().encode(marks).write(to: URL(fileURLWithPath: output + "/problems.json"), options: .atomic)
                return marks
            } }
            if name == Self.defaultName { problemMarks.withLockedValue { $0[record.id] = marks } }
            logger.info("report of session \(record.id) (\(name)) written in \(String(format: "%.2f", Date().timeIntervalSince(started))) s: \(output)")
            return .ready(url: "/sessions/\(record.id)/reports/\(name)/index.html", generated: Date().timeIntervalSince1970)
        } catch {
            logger.error("report of session \(record.id) (\(name)) failed: \(error)")
            return .failed(error)
        }
    }

    private func key(_ session: Int64, _ name: String) -> String { "\(session)/\(name)" }
}
