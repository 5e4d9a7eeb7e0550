internal import ArgumentParser
internal import ControlProtocol
internal import Foundation
internal import SessionModel

struct MediaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media",
        abstract: "Write a session's media streams (think-aloud audio, face video), each as one playable file.",
        discussion: "Files are named after their stream (voice-1.wav, face-1.mp4) and readable by their owner only: they hold a participant's voice and face.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String
    @Option(name: [.short, .customLong("out")], help: ArgumentHelp("The directory to write the files into (created if missing).", valueName: "DIR"))
    var directory: String

    func run() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var files: [String: Output] = [:]
        defer { for file in files.values { try? file.close() } }
        let summary = try await global.client.call(ControlRequest.Media(session: session), onMedia: { piece in
            guard !piece.file.contains("/"), let bytes = Data(base64Encoded: piece.base64) else {
                throw ValidationError("muevald sent an unreadable piece of \(piece.file)")
            }
            if files[piece.file] == nil { files[piece.file] = try Output.create(directory + "/" + piece.file) }
            try files[piece.file]?.write([UInt8](bytes))
        })
        for file in files.values { try file.close() }
        files.removeAll()
        try global.show(summary) { ControlOutput.media($0, directory: directory) }
    }
}

struct TranscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcribe",
        abstract: "Transcribe a stopped session's think-aloud audio (again), in the background.",
        discussion: "muevald transcribes each session's audio when it stops; this runs it again, e.g. after changing [transcription] exclamations. `muevalctl status` shows the progress.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String

    func run() async throws {
        try await global.call(ControlRequest.Transcribe(session: session), human: ControlOutput.transcriptionQueued)
    }
}
