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
