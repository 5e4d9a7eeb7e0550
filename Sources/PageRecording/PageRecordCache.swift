internal import OrderedCollections
internal import Synchronization

/// Page records the console sanitised again (stored by another version of the sanitiser), by session file and event
/// id: seeking again into a stretch of such a session does not pass the allowlist over the same snapshot again (most
/// of a seek's time on the server then, docs/BENCHMARKS.md "Page recording"). A stored record never changes. Bounded by bytes
/// (`replay.page_cache_mib`); the oldest entries go first.
public final class PageRecordCache: Sendable {
    private struct State {
        var entries: OrderedDictionary<String, [UInt8]> = [:]
        var bytes = 0
    }

    private let limit: Int
    private let state = Mutex(State())

    public init(limitBytes: Int) {
        limit = max(limitBytes, 0)
    }

    /// The sanitised record of event `id` in the file at `path`, made by `make` (and kept) when it is not here.
    func record(path: String, id: Int64, make: () -> [UInt8]?) -> [UInt8]? {
        let key = path + "\u{0}" + String(id)
        if let hit = state.withLock({ $0.entries[key] }) { return hit }
        guard let made = make() else { return nil }
        guard made.count <= limit else { return made }
        state.withLock { state in
            guard state.entries.updateValue(made, forKey: key) == nil else { return }
            state.bytes += made.count
            while state.bytes > limit, !state.entries.isEmpty {
                state.bytes -= state.entries.removeFirst().value.count
            }
        }
        return made
    }

    /// Bytes held now.
    public var bytes: Int { state.withLock { $0.bytes } }
}
