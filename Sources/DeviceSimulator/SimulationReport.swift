internal import MuEvalWire
internal import WireProtocol
internal import Foundation

/// What happened to one device's events; `--json` prints these.
public struct DeviceReport: Codable, Sendable, Equatable {
    public var deviceId: String
    public var deviceName: String
    /// Events the scenario produced.
    public var generated = 0
    /// Events written at least once.
    public var sent = 0
    /// Events the server acknowledged as durable.
    public var acknowledged = 0
    /// Writes of events already written on an earlier connection.
    public var resent = 0
    /// Events the server refused with an `<error>` (no session waiting, for example).
    public var rejected = 0
    /// Events the session does not record (its sensor selection), so never acknowledged.
    public var notSelected = 0
    /// Events neither acknowledged nor refused when the run ended.
    public var unacknowledged = 0
    /// Generated events per class.
    public var perClass: [String: Int] = [:]
    public var connections = 0
    public var disconnects = 0
    /// Sessions that welcomed the device.
    public var sessions: [String] = []
    /// The last connection failure or server error, when there was one.
    public var lastProblem: String?
    /// Why the tester's recording (`--think-aloud`: voice, face) stopped or never started: a run asked
    /// to record that did not is not complete.
    public var recordingProblem: String?
    /// With `--invitation`: the server's tasks in its order and how the tester did each (empty: the server sent
    /// none, and the scenario's own tasks were played); nil without an invitation or when no welcome came.
    public var tasks: [AssignedTask]?
    /// The questionnaire's page the server gave with the tasks.
    public var questionnaire: String?
    /// Why an invitation got no tasks: the server refused it, or no welcome came in time. Nothing was played.
    public var invitationProblem: String?

    public init(deviceId: String, deviceName: String) {
        self.deviceId = deviceId
        self.deviceName = deviceName
    }

    /// Every event ended acknowledged (or was one the session does not record), and the recording
    /// asked for was made.
    public var isComplete: Bool { unacknowledged == 0 && rejected == 0 && recordingProblem == nil && invitationProblem == nil }
}

/// The whole run: the server, the scenario, and each device.
public struct SimulationReport: Codable, Sendable, Equatable {
    public var server: String
    public var scenario: String
    public var seed: UInt64
    public var seconds: Double
    public var devices: [DeviceReport]

    public var total: DeviceReport {
        var total = DeviceReport(deviceId: "all", deviceName: "all devices")
        for device in devices {
            total.generated += device.generated
            total.sent += device.sent
            total.acknowledged += device.acknowledged
            total.resent += device.resent
            total.rejected += device.rejected
            total.notSelected += device.notSelected
            total.unacknowledged += device.unacknowledged
            total.perClass.merge(device.perClass, uniquingKeysWith: +)
            total.connections += device.connections
            total.disconnects += device.disconnects
            total.sessions += device.sessions
            total.lastProblem = device.lastProblem ?? total.lastProblem
            total.recordingProblem = device.recordingProblem ?? total.recordingProblem
            total.invitationProblem = device.invitationProblem ?? total.invitationProblem
        }
        return total
    }

    /// A few lines for people.
    public var text: String {
        let total = total
        var lines = [
            "muevalsim: scenario \(scenario), \(devices.count) device\(devices.count == 1 ? "" : "s"), server \(server), \(String(format: "%.1f", seconds)) s",
            "  events: \(total.generated) generated, \(total.sent) sent, \(total.acknowledged) acknowledged, \(total.resent) re-sent, "
                + "\(total.rejected) rejected, \(total.unacknowledged) unacknowledged"
                + (total.notSelected > 0 ? ", \(total.notSelected) not selected by the session" : ""),
            "  per class: " + EventClass.allCases.map { "\($0.rawValue) \(total.perClass[$0.rawValue] ?? 0)" }.joined(separator: ", "),
            "  connections: \(total.connections) (\(total.disconnects) dropped); sessions: \(total.sessions.isEmpty ? "none" : Set(total.sessions).sorted().joined(separator: ", "))",
        ]
        if devices.count > 1 {
            for device in devices {
                lines.append("  \(device.deviceName) (\(device.deviceId)): \(device.generated) generated, \(device.acknowledged) acknowledged, \(device.resent) re-sent")
            }
        }
        for device in devices {
            if let tasks = device.tasks {
                lines.append(tasks.isEmpty ? "  tasks from the server: none; the scenario's own tasks were played"
                                           : "  tasks from the server, in its order:")
                lines += tasks.enumerated().map { "    \($0.offset + 1). \($0.element.line(scenario: scenario))" }
            }
            if let questionnaire = device.questionnaire { lines.append("  questionnaire: \(questionnaire)") }
        }
        if let problem = total.invitationProblem { lines.append("  invitation: \(problem)") }
        if let problem = total.recordingProblem { lines.append("  recording failed: \(problem)") }
        if total.unacknowledged > 0 || total.rejected > 0, let problem = total.lastProblem { lines.append("  last problem: \(problem)") }
        return lines.joined(separator: "\n")
    }
}
