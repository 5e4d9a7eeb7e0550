public import ConsoleServer
public import ControlService
public import TranscriptionService

// The control commands reach transcription and the console through these, given at construction.
extension TranscriptionService: TranscriptionQueue {}
extension ConsoleServer: ConsoleLogins {}
