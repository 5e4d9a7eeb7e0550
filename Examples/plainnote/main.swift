// PlainNote: the thesis's host app (section 4.2.1) as a command-line stand-in, linking MuEvalCapture
// and nothing else. What an app adds to be evaluated is the `startCapture` call, the task markers,
// and the events its UI hooks record (docs/CAPTURE-LIBRARY.md).
//
//   plainnote [--connect HOST:PORT | --server NAME] [--device-id ID] [--token T] [--spool DIR]
//             [--notes N] [--pace SECONDS] [--stop-timeout SECONDS] [--exit-without-stop]
//             [--invitation CODE | --tasks] [--wait SECONDS]
//
// With an invitation (or --tasks), the tester follows the study's tasks the server sends: each is shown with its
// instructions and time left, and the tester begins, ends or gives it up by typing a letter and Return.
import MuEvalCapture
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One reading when the session selects it, and one every ten seconds while it does.
final class BatterySensor: CaptureSensor {
    let produces = Selectable.event(eventClass: "DeviceSensorEvent", sensor: "battery")
    private let task = Mutex<Task<Void, Never>?>(nil)

    func start(_ recorder: SensorRecorder) {
        task.withLock {
            $0 = Task {
                while !Task.isCancelled {
                    recorder.reading(["level": .real(0.8), "state": .string("unplugged")])
                    try? await Task.sleep(for: .seconds(10))
                }
            }
        }
    }

    func stop() {
        task.withLock { $0?.cancel() }
    }
}

/// One line on stderr, status 2.
func fail(_ message: String) -> Never {
    let line = Array("plainnote: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

// The arguments, by hand: the example links the capture library alone.
var options: [String: String] = [:]
var exitWithoutStop = false
var followTasks = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument == "--exit-without-stop" {
        exitWithoutStop = true
    } else if argument == "--tasks" {
        followTasks = true
    } else if ["--connect", "--server", "--device-id", "--token", "--spool", "--notes", "--pace", "--stop-timeout", "--invitation",
               "--wait"].contains(argument),
              let value = arguments.popFirst() {
        options[argument] = value
    } else {
        fail("unknown or incomplete argument \(argument)")
    }
}

var configuration = CaptureConfiguration(appId: "org.mueval.PlainNote", appVersion: "1.0")
if let id = options["--device-id"] { configuration.device.deviceId = id }
configuration.device.model = "PlainNote example"
configuration.device.screenWidth = 320
configuration.device.screenHeight = 480
configuration.token = options["--token"]
configuration.invitation = options["--invitation"]
followTasks = followTasks || configuration.invitation != nil
configuration.spoolDirectory = options["--spool"]
configuration.sensors = [BatterySensor()]
if let seconds = options["--stop-timeout"].flatMap(Double.init) { configuration.stopTimeout = seconds }
do {
    if let address = options["--connect"] {
        configuration.server = .address(try ServerAddress(parsing: address))
    } else {
        configuration.server = .discover(name: options["--server"])
    }
    // "[[MFCaptureManager sharedInstance] startCapture]": the one call an app makes.
    try CaptureManager.shared.startCapture(configuration)
} catch {
    fail("\(error)")
}

let capture = CaptureManager.shared
let notes = options["--notes"].flatMap(Int.init) ?? 3
let pace = options["--pace"].flatMap(Double.init) ?? 0
/// A 1×1 PNG: the screenshot an app would take of its key window.
let screenshot: [UInt8] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41,
    0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0, 0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
]
let list = "NotesListViewController", editor = "NoteEditorViewController"

/// What the app does for one note: the Add button, the editor, the save, back to the list.
func writeNote(_ note: Int) {
    capture.touch(.began, x: 296, y: 42, view: list)
    capture.touch(.ended, x: 296, y: 42, view: list)
    capture.buttonPressed("Add", id: "addButton", view: list)
    capture.record(.viewAppeared(editor, stack: [list, editor], previousView: list, screenshot: screenshot))
    capture.record(.custom("noteSaved", ["note": .integer(Int64(note)), "length": .integer(Int64(20 + note))]))
    capture.record(.viewAppeared(list, stack: [list], previousView: editor, transition: "pop", screenshot: screenshot))
}

capture.record(.application(.launch, appId: "org.mueval.PlainNote", appVersion: "1.0"))
capture.viewAppeared(list, stack: [list], screenshot: screenshot)
if followTasks {
    await TaskGuide(capture: capture, wait: options["--wait"].flatMap(Double.init) ?? 30, writeNote: writeNote).run()
} else {
    for note in 1...max(notes, 1) {
        capture.beginEvent("Write a note")
        writeNote(note)
        capture.endEvent("Write a note")
        if pace > 0 { try? await Task.sleep(for: .seconds(pace)) }
    }
}

if exitWithoutStop {
    // An app killed after recording: what the spool holds is delivered on the next start.
    let deadline = ContinuousClock.now + .seconds(10)
    while configuration.spoolDirectory != nil, let statistics = capture.statistics, statistics.spooled < statistics.recorded,
          ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(10))
    }
    let statistics = capture.statistics
    print("plainnote: exiting without stopCapture: recorded \(statistics?.recorded ?? 0), spooled \(statistics?.spooled ?? 0)")
    exit(0)
}

guard let summary = await capture.stopCapture() else { fail("capture was not started") }
let statistics = summary.statistics
print("plainnote: recorded \(statistics.recorded), restored \(statistics.restored), acknowledged \(statistics.acknowledged),"
      + " unacknowledged \(summary.unacknowledged), connections \(statistics.connections), sessions \(statistics.sessions.joined(separator: " "))"
      + (statistics.lastProblem.map { ", last problem: \($0)" } ?? ""))
exit(summary.unacknowledged == 0 && statistics.refused == 0 ? 0 : 1)
