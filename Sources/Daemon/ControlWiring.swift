public import ConsoleServer
public import ControlProtocol
public import ControlService
public import TranscriptionService

// The control commands reach transcription and the console through these, given at construction.
extension TranscriptionService: TranscriptionQueue {}

extension ConsoleServer: ConsoleLogins {
    /// The console's login link as `console` replies it.
    public func loginLink(now: Double) throws -> ConsoleLink {
        let link = try issueLoginLink(now: now)
        return ConsoleLink(url: link.url, expires: link.expires)
    }
}
