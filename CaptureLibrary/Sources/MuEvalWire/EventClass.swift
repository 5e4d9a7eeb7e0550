/// The thesis's five event classes (section 2.6.2), as devices send them in `class` and session
/// files store them: the one list every layer names them from. Other class names are allowed on
/// the wire and stored as sent. muevald's own class for observers' notes is `ObserverNote.eventClass`.
public enum EventClass: String, CaseIterable, Codable, Sendable {
    case userInput = "UserInputEvent"
    case userInterface = "UserInterfaceEvent"
    case deviceSensor = "DeviceSensorEvent"
    case application = "ApplicationEvent"
    case custom = "CustomEvent"
}
