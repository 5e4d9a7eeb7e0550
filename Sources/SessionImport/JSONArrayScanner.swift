/// Splits a JSON array into its elements as the bytes stream in, so that a log of any size is read one
/// element at a time; each element's bytes are then parsed on their own (`PlainJSON`).
///
/// Hand-written: no JSON library here streams, and Foundation's parser reads whole documents and
/// reports no line or column. The scanner knows only what it must (strings, escapes, nesting) and the
/// array around the elements; an element's own syntax is the parser's job.
struct JSONArrayScanner: ElementScanner {
    /// How the input ended.
    enum Ending: Equatable {
        /// With the array's closing bracket.
        case closed
        /// After `elements` whole elements, without the closing bracket.
        case unclosed
        /// Inside an element that began at `start`: it is dropped.
        case insideElement(start: TextPosition)
        /// Before the array began.
        case empty
    }

    private enum State {
        case beforeArray, beforeElement(first: Bool), inElement, afterElement, afterArray
    }

    private var state = State.beforeArray
    private(set) var position = TextPosition()
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var element: [UInt8] = []
    private var elementStart = TextPosition()
    private(set) var elements = 0
    /// A packet is a few hundred bytes; one this long means the file is something else.
    static let maxElementBytes = 16 << 20

    /// Scans `chunk`, calling `body` with each element completed in it and where it began.
    mutating func scan(_ chunk: [UInt8], _ body: ([UInt8], TextPosition) -> Void) throws(ScanFailure) {
        try chunk.withUnsafeBufferPointer { (bytes) throws(ScanFailure) in
            var runStart = 0
            for index in bytes.indices {
                let byte = bytes[index]
                switch state {
                case .inElement:
                    if inString {
                        if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    } else if byte == UInt8(ascii: "\"") {
                        inString = true
                    } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                        depth += 1
                    } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                        depth -= 1
                        if depth == 0 {
                            element.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...index]))
                            elements += 1
                            state = .afterElement
                            body(element, elementStart)
                            element.removeAll(keepingCapacity: element.capacity <= 1 << 20)
                        }
                    }
                case .beforeArray:
                    if !isWhitespace(byte) {
                        guard byte == UInt8(ascii: "[") else { throw ScanFailure(reason: "expected the log's opening '[', found \(describe(byte))", position: position) }
                        state = .beforeElement(first: true)
                    }
                case .beforeElement(let first):
                    if byte == UInt8(ascii: "{") {
                        state = .inElement
                        depth = 1
                        elementStart = position
                        runStart = index
                    } else if byte == UInt8(ascii: "]"), first {
                        state = .afterArray
                    } else if !isWhitespace(byte) {
                        throw ScanFailure(reason: "expected a packet (a JSON object), found \(describe(byte))", position: position)
                    }
                case .afterElement:
                    if byte == UInt8(ascii: ",") {
                        state = .beforeElement(first: false)
                    } else if byte == UInt8(ascii: "]") {
                        state = .afterArray
                    } else if !isWhitespace(byte) {
                        throw ScanFailure(reason: "expected ',' or ']' after a packet, found \(describe(byte))", position: position)
                    }
                case .afterArray:
                    if !isWhitespace(byte) {
                        throw ScanFailure(reason: "unexpected \(describe(byte)) after the log's closing ']'", position: position)
                    }
                }
                if byte == UInt8(ascii: "\n") {
                    position.line += 1
                    position.column = 1
                } else if byte & 0xC0 != 0x80 {
                    position.column += 1
                }
            }
            if case .inElement = state {
                element.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
                guard element.count <= Self.maxElementBytes else {
                    throw ScanFailure(reason: "a packet longer than \(Self.maxElementBytes >> 20) MiB: not an IMUT log packet", position: elementStart)
                }
            }
        }
    }

    /// How the input ended, once it has.
    var ending: Ending {
        switch state {
        case .beforeArray: .empty
        case .afterArray: .closed
        case .inElement: .insideElement(start: elementStart)
        case .beforeElement, .afterElement: .unclosed
        }
    }

    private func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16, uppercase: true)
    }
}
