/// Counts lines and columns over the bytes of a file as they stream past, so that an error anywhere
/// names its line and column without the file being held: the position of a buffer's first byte is
/// kept, and a position inside the buffer is counted from there.
struct TextPosition: Sendable, Equatable {
    var line = 1
    /// In characters: UTF-8 continuation bytes do not count.
    var column = 1

    /// The position after `bytes`, which start at this one.
    func advanced(over bytes: some Sequence<UInt8>) -> TextPosition {
        var next = self
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                next.line += 1
                next.column = 1
            } else if byte & 0xC0 != 0x80 {
                next.column += 1
            }
        }
        return next
    }

    var errorPosition: ImportError.Position { .text(line: line, column: column) }
}

/// Where a scanner found the file's structure broken, and why.
struct ScanFailure: Error, Equatable {
    var reason: String
    var position: TextPosition
}

/// Splits a file's bytes into the elements of its top-level array as they stream in (`JSONArrayScanner`,
/// `PlistArrayScanner`).
protocol ElementScanner {
    mutating func scan(_ chunk: [UInt8], _ body: ([UInt8], TextPosition) -> Void) throws(ScanFailure)
}

extension ElementScanner {
    /// Each element of the file with where it begins, a chunk at a time. The elements a chunk completes
    /// before a break in it are handled first, so that the first error in the file is the one reported.
    mutating func forEachElement(in chunks: inout FileChunks, file: String, _ body: ([UInt8], TextPosition) throws -> Void) throws {
        var found: [(bytes: [UInt8], at: TextPosition)] = []
        while case let chunk = try chunks.next(), !chunk.isEmpty {
            var broken: ScanFailure?
            do {
                try scan(chunk) { found.append(($0, $1)) }
            } catch {
                broken = error
            }
            for element in found { try body(element.bytes, element.at) }
            found.removeAll(keepingCapacity: true)
            if let broken { throw ImportError(file: file, at: broken.position.errorPosition, broken.reason) }
        }
    }
}
