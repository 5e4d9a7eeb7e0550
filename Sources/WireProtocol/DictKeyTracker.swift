/// The keys of every dict open in the message, for the duplicate-key check, in one reused byte buffer.
/// Small dicts compare keys directly; past `linearLimit` keys a set of hashes keeps the check linear overall.
struct DictKeyTracker {
    private struct Level {
        var firstKey: Int
        var firstByte: Int
        var hashes: Set<Int> = []
    }

    private static let linearLimit = 16

    private var bytes: [UInt8] = []
    /// Start of each key in `bytes`; a key ends where the next one (or `bytes`) does.
    private var starts: [Int] = []
    private var levels: [Level] = []
    private var candidateStart = 0

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        levels.removeAll(keepingCapacity: true)
    }

    mutating func beginDict() {
        levels.append(Level(firstKey: starts.count, firstByte: bytes.count))
    }

    mutating func endDict() {
        let level = levels.removeLast()
        bytes.removeLast(bytes.count - level.firstByte)
        starts.removeLast(starts.count - level.firstKey)
    }

    /// Stages a key read from the document, to be checked by `commitCandidate`.
    mutating func appendCandidate(_ key: UnsafeBufferPointer<UInt8>) {
        candidateStart = bytes.count
        bytes.append(contentsOf: key)
    }

    /// Adds the staged key to the innermost dict; false when the dict has it already.
    mutating func commitCandidate() -> Bool {
        let top = levels.count - 1
        let first = levels[top].firstKey
        let isNew: Bool
        if starts.count - first < Self.linearLimit {
            isNew = bytes.withUnsafeBufferPointer { all in
                !(first..<starts.count).contains { bytesEqual(key($0, in: all), candidate(in: all)) }
            }
        } else {
            var hashes = levels[top].hashes
            levels[top].hashes = []  // leaves `hashes` the only owner, so inserting does not copy
            isNew = bytes.withUnsafeBufferPointer { all -> Bool in
                if hashes.isEmpty {
                    for k in first..<starts.count { hashes.insert(Self.hash(key(k, in: all))) }
                }
                // Hasher is seeded per process, so a peer cannot force collisions onto the slow confirmation.
                return hashes.insert(Self.hash(candidate(in: all))).inserted
                    || !(first..<starts.count).contains { bytesEqual(key($0, in: all), candidate(in: all)) }
            }
            levels[top].hashes = hashes
        }
        if isNew { starts.append(candidateStart) }
        return isNew
    }

    private func key(_ k: Int, in all: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: all[starts[k]..<(k + 1 < starts.count ? starts[k + 1] : candidateStart)])
    }

    private func candidate(in all: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: all[candidateStart...])
    }

    /// The innermost dict's newest key.
    func withLastKey<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[(starts.last ?? 0)...])) }
    }

    /// The staged key as text, for error messages.
    var candidate: String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[candidateStart...]), as: UTF8.self) }
    }

    private static func hash(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(key))
        return hasher.finalize()
    }
}
