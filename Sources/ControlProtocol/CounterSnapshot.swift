/// A copy of the counters at one moment; the JSON keys are part of `muevalctl status --json`.
public struct CounterSnapshot: Codable, Sendable, Equatable {
    public var connectionsAccepted: Int
    public var connectionsRefused: Int
    public var connectionsOpen: Int
    public var eventsReceived: Int
    public var eventsStored: Int
    public var eventsDuplicate: Int
    public var eventsFiltered: Int
    public var eventsRejectedNoSession: Int
    public var eventsFailedStorage: Int
    public var malformedMessages: Int
    public var repliesDropped: Int
    public var authenticationFailures: Int
    public var bytesReceived: Int
    public var mediaChunksStored: Int
    public var mediaRefused: Int


    public init(connectionsAccepted: Int = 0, connectionsRefused: Int = 0, connectionsOpen: Int = 0, eventsReceived: Int = 0, eventsStored: Int = 0, eventsDuplicate: Int = 0, eventsFiltered: Int = 0, eventsRejectedNoSession: Int = 0, eventsFailedStorage: Int = 0, malformedMessages: Int = 0, repliesDropped: Int = 0, authenticationFailures: Int = 0, bytesReceived: Int = 0,
                mediaChunksStored: Int = 0, mediaRefused: Int = 0) {
        self.connectionsAccepted = connectionsAccepted
        self.connectionsRefused = connectionsRefused
        self.connectionsOpen = connectionsOpen
        self.eventsReceived = eventsReceived
        self.eventsStored = eventsStored
        self.eventsDuplicate = eventsDuplicate
        self.eventsFiltered = eventsFiltered
        self.eventsRejectedNoSession = eventsRejectedNoSession
        self.eventsFailedStorage = eventsFailedStorage
        self.malformedMessages = malformedMessages
        self.repliesDropped = repliesDropped
        self.authenticationFailures = authenticationFailures
        self.bytesReceived = bytesReceived
        self.mediaChunksStored = mediaChunksStored
        self.mediaRefused = mediaRefused
    }
}
