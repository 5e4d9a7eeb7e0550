/// The (device, seq) pairs a session file holds, in memory, so that a recording session can
/// drop duplicates without the unique index `events_device_seq`: keeping that index up to date
/// cost about a third of each insert, and a session's writer is the one thread every event of
/// the session goes through (docs/BENCHMARKS.md). The index is built when the file is closed.
///
/// Seqs are kept as 64-bit bitmaps keyed by `seq >> 6`: a device's seqs mostly run in order, so
/// an hour of events takes a few thousand entries, and any order (a resend, a hostile device's
/// scattered seqs) still costs one hash lookup per event, never a search or a shift.
struct SeqLedger {
    /// One device's seqs; a class, so that the last device's can be kept at hand.
    private final class DeviceSeqs {
        var blocks: [Int64: UInt64] = [:]
        /// Every seq up to this one is held by the device's previous session (`setFloor`).
        var floor: Int64?
    }

    private var byDevice: [String: DeviceSeqs] = [:]
    /// The device of the previous call: a batch is nearly always one device's, and comparing the
    /// same string again is cheaper than hashing it for every event.
    private var last: (device: String, seqs: DeviceSeqs)?

    /// Records (device, seq); false when it was already recorded.
    mutating func insert(device: String, seq: Int64) -> Bool {
        let (block, bit) = Self.position(of: seq)
        let seqs = seqs(of: device)
        if let floor = seqs.floor, seq <= floor { return false }
        // One in-place lookup (the `default:` subscript modifies without copying).
        func set(_ word: inout UInt64) -> Bool {
            defer { word |= bit }
            return word & bit == 0
        }
        return set(&seqs.blocks[block, default: 0])
    }

    /// Forgets (device, seq): its insert was rolled back.
    mutating func remove(device: String, seq: Int64) {
        let (block, bit) = Self.position(of: seq)
        let seqs = seqs(of: device)
        guard let word = seqs.blocks[block] else { return }
        seqs.blocks[block] = word & ~bit == 0 ? nil : word & ~bit
    }

    /// The device's previous session stored its seqs up to `seq` (it stopped while the device was away): what
    /// the device resends of them is taken for recorded.
    mutating func setFloor(_ seq: Int64, of device: String) {
        let seqs = seqs(of: device)
        seqs.floor = max(seqs.floor ?? seq, seq)
    }

    /// The device's highest seq recorded here, its floor included; nil when there is none. Once per stop:
    /// one pass over the device's blocks.
    func highest(of device: String) -> Int64? {
        guard let seqs = byDevice[device] else { return nil }
        // A stored block's word is never 0 (`remove` drops an emptied one): its highest bit is a seq.
        let top = seqs.blocks.max { $0.key < $1.key }.map { ($0.key << 6) + Int64(63 - $0.value.leadingZeroBitCount) }
        return [top, seqs.floor].compactMap { $0 }.max()
    }

    private mutating func seqs(of device: String) -> DeviceSeqs {
        if let last, last.device == device { return last.seqs }
        let seqs = byDevice[device] ?? DeviceSeqs()
        byDevice[device] = seqs
        last = (device, seqs)
        return seqs
    }

    private static func position(of seq: Int64) -> (block: Int64, bit: UInt64) {
        (seq >> 6, 1 << UInt64(seq & 63))
    }
}
