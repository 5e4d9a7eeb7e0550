/// Cuts a fragmented MP4 byte stream (ffmpeg's `-movflags frag_keyframe+empty_moov+default_base_moof`)
/// into the parts of a `<media>` stream: part 0 the init segment (`ftyp`, `moov`), then each fragment
/// (`moof` with its `mdat`) whole, so that the parts concatenate into one playable file (docs/PROTOCOL.md).
/// Each fragment carries its start on the media's timeline, read from its `tfdt` with the `mdhd`
/// timescale. Written by hand: only the box headers and two fields are needed, and no MP4 library is
/// among the project's packages.
struct FragmentedMP4Splitter {
    struct Part: Equatable {
        var bytes: [UInt8]
        /// The init segment (`ftyp`, `moov`), which every later part needs first.
        var isInit: Bool
        /// Seconds on the media's timeline where a fragment starts (its `tfdt`: ffmpeg always writes one); 0 for the init segment.
        var start: Double
    }

    enum Failure: Error, Equatable, CustomStringConvertible {
        case badBox(offset: Int)
        case truncated(bytes: Int)

        var description: String {
            switch self {
            case .badBox(let offset): "the encoder wrote a broken MP4 box at byte \(offset)"
            case .truncated(let bytes): "the encoder's MP4 stream ended inside a box (\(bytes) bytes left over)"
            }
        }
    }

    private var buffer: [UInt8] = []
    /// Bytes of the stream consumed before `buffer`.
    private var consumed = 0
    /// The part being put together: the init segment until the first fragment, then a fragment.
    private var current: [UInt8] = []
    private var currentStart = 0.0
    private var initSent = false
    private var timescale: UInt32 = 0

    /// The parts that `bytes` completed, in order.
    mutating func append(_ bytes: some Sequence<UInt8>) throws(Failure) -> [Part] {
        buffer.append(contentsOf: bytes)
        var parts: [Part] = []
        var offset = 0
        while let (type, size) = try header(at: offset), offset + size <= buffer.count {
            let box = buffer[offset..<(offset + size)]
            switch type {
            case "moof":
                // A fragment begins: what came before is complete.
                if !current.isEmpty || !initSent {
                    parts.append(Part(bytes: current, isInit: !initSent, start: initSent ? currentStart : 0))
                    initSent = true
                }
                current = Array(box)
                currentStart = Self.fragmentStart(box, timescale: timescale) ?? currentStart
            case "moov":
                timescale = Self.timescale(box) ?? timescale
                current.append(contentsOf: box)
            default:
                current.append(contentsOf: box)
            }
            offset += size
        }
        buffer.removeFirst(offset)
        consumed += offset
        return parts
    }

    /// The last part, once the stream has ended.
    mutating func finish() throws(Failure) -> Part? {
        guard buffer.isEmpty else { throw .truncated(bytes: buffer.count) }
        defer {
            current = []
            initSent = true
        }
        return current.isEmpty ? nil : Part(bytes: current, isInit: !initSent, start: initSent ? currentStart : 0)
    }

    /// The type and whole size of the box at `offset` in `buffer`, nil while its header is incomplete.
    private func header(at offset: Int) throws(Failure) -> (String, Int)? {
        guard let (type, size, _) = Self.box(buffer[...], at: offset) else { return nil }
        guard size >= 8 else { throw .badBox(offset: consumed + offset) }
        return (type, size)
    }

    /// A box's type, whole size and header length at `offset` (sizes of 64 bits included), nil when
    /// fewer bytes than its header are there. A size of 0 ("to the end of the file") is not used in
    /// fragmented streams and is refused by the caller.
    static func box(_ bytes: ArraySlice<UInt8>, at offset: Int) -> (type: String, size: Int, header: Int)? {
        let base = bytes.startIndex + offset
        guard bytes.count - offset >= 8 else { return nil }
        let size32 = Int(number(bytes, at: base, count: 4))
        let type = String(decoding: bytes[(base + 4)..<(base + 8)], as: UTF8.self)
        guard size32 == 1 else { return (type, size32, 8) }
        guard bytes.count - offset >= 16 else { return nil }
        return (type, Int(clamping: number(bytes, at: base + 8, count: 8)), 16)
    }

    /// A big-endian number of `count` bytes at the absolute index `index`.
    static func number(_ bytes: ArraySlice<UInt8>, at index: Int, count: Int) -> UInt64 {
        bytes[index..<(index + count)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The boxes inside a container box's payload.
    static func children(of box: ArraySlice<UInt8>) -> [(type: String, box: ArraySlice<UInt8>)] {
        guard let (_, _, header) = Self.box(box, at: 0) else { return [] }
        var result: [(String, ArraySlice<UInt8>)] = []
        var offset = header
        while let (type, size, _) = Self.box(box, at: offset), size >= 8, offset + size <= box.count {
            result.append((type, box[(box.startIndex + offset)..<(box.startIndex + offset + size)]))
            offset += size
        }
        return result
    }

    /// The box at the end of `path` (types from inside `box`), the first of each type.
    static func find(_ path: [String], in box: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let type = path.first else { return box }
        guard let child = children(of: box).first(where: { $0.type == type }) else { return nil }
        return find(Array(path.dropFirst()), in: child.box)
    }

    /// The first track's timescale (`moov/trak/mdia/mdhd`): units of the fragments' times per second.
    static func timescale(_ moov: ArraySlice<UInt8>) -> UInt32? {
        guard let mdhd = find(["trak", "mdia", "mdhd"], in: moov), let (_, _, header) = box(mdhd, at: 0) else { return nil }
        let payload = mdhd.startIndex + header
        // version, flags (4 bytes), creation and modification times (4 or 8 bytes each), timescale.
        let at = payload + 4 + (mdhd[payload] == 1 ? 16 : 8)
        guard at + 4 <= mdhd.endIndex else { return nil }
        return UInt32(number(mdhd, at: at, count: 4))
    }

    /// A fragment's start in seconds (`moof/traf/tfdt`'s base media decode time), nil without one.
    static func fragmentStart(_ moof: ArraySlice<UInt8>, timescale: UInt32) -> Double? {
        guard timescale > 0, let tfdt = find(["traf", "tfdt"], in: moof), let (_, _, header) = box(tfdt, at: 0) else { return nil }
        let payload = tfdt.startIndex + header
        let count = tfdt[payload] == 1 ? 8 : 4
        guard payload + 4 + count <= tfdt.endIndex else { return nil }
        return Double(number(tfdt, at: payload + 4, count: count)) / Double(timescale)
    }
}
