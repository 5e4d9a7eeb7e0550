/// The same calls on arrays, so that a caller needs no closure (Array's `withUnsafeBytes` loses the error's type).
extension Descriptor {
    public func writeAll<Element: BitwiseCopyable>(_ elements: [Element], waitingWhenFull: Bool = false) throws(DescriptorIOError) {
        try Self.withBytes(of: elements) { bytes throws(DescriptorIOError) in try writeAll(bytes, waitingWhenFull: waitingWhenFull) }
    }

    public func writeAll<Element: BitwiseCopyable>(_ elements: [Element], at offset: Int64) throws(DescriptorIOError) {
        try Self.withBytes(of: elements) { bytes throws(DescriptorIOError) in try writeAll(bytes, at: offset) }
    }

    public func sendAll<Element: BitwiseCopyable>(_ elements: [Element]) throws(DescriptorIOError) {
        try Self.withBytes(of: elements) { bytes throws(DescriptorIOError) in try sendAll(bytes) }
    }

    /// `count` bytes from `offset`, fewer only where the file ends.
    public func readFully(count: Int, at offset: Int64) throws(DescriptorIOError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(DescriptorIOError) in try readFully(into: buffer, at: offset) }
        }
        bytes.removeSubrange(try read.get()...)
        return bytes
    }

    private static func withBytes<Element>(
        of elements: [Element], _ body: (UnsafeRawBufferPointer) throws(DescriptorIOError) -> Void
    ) throws(DescriptorIOError) {
        try elements.withUnsafeBytes { bytes in Result { () throws(DescriptorIOError) in try body(bytes) } }.get()
    }
}
