/// What to do with events from a device that no session is waiting for.
public enum UnknownDevicePolicy: String, Sendable, CaseIterable, Codable {
    /// Answer `<error>`, count the events and show them in `status` (the default: nothing is recorded by accident).
    case reject
    /// Open a session for each such connection, stopped when it ends (unattended field studies).
    case auto
}
