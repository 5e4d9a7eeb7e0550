/// The automatic reports of stopped sessions (`status`): waiting in the durable queue, and being written.
public struct ReportQueueStatus: Codable, Sendable, Equatable {
    public var waiting: Int
    public var writing: Int

    public init(waiting: Int, writing: Int) {
        self.waiting = waiting
        self.writing = writing
    }
}
