import DescriptorIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// pwrite and pread on a temporary file: at offsets, across its end, and the offset an error names.
struct FileTests {
    /// A read-write file with no name, closed with this value.
    final class TemporaryFile {
        let descriptor: CInt

        init() {
            var template = Array("/tmp/descriptorio-XXXXXX".utf8CString)
            descriptor = mkstemp(&template)
            precondition(descriptor >= 0)
            unlink(template)
        }

        deinit { close(descriptor) }
    }

    @Test func writesAndReadsAtOffsets() throws {
        let file = TemporaryFile()
        let descriptor = Descriptor(file.descriptor)
        try descriptor.writeAll(Array("hello".utf8), at: 0)
        try descriptor.writeAll(Array("world".utf8), at: 100)
        #expect(try descriptor.readFully(count: 5, at: 100) == Array("world".utf8))
        #expect(try descriptor.readFully(count: 3, at: 1) == Array("ell".utf8))
        // Between the two: the hole reads as zeros.
        #expect(try descriptor.readFully(count: 4, at: 50) == [0, 0, 0, 0])
        // The descriptor's own position is not moved by either.
        #expect(lseek(file.descriptor, 0, SEEK_CUR) == 0)
    }

    /// Asked for more than is left: what is left, and nothing past the end.
    @Test func readsUpToTheEndOfTheFile() throws {
        let file = TemporaryFile()
        let descriptor = Descriptor(file.descriptor)
        let bytes = pattern(300_000)
        try descriptor.writeAll(bytes, at: 0)
        #expect(try descriptor.readFully(count: 1 << 20, at: 0) == bytes)
        #expect(try descriptor.readFully(count: 1000, at: 299_990) == Array(bytes[299_990...]))
        #expect(try descriptor.readFully(count: 10, at: 400_000) == [])
        var buffer = [UInt8](repeating: 0xFF, count: 20)
        let count = try buffer.withUnsafeMutableBytes { try descriptor.readFully(into: $0, at: 299_995) }
        #expect(count == 5)
        #expect(buffer[..<5] == bytes[299_995...])
        #expect(buffer[5...].allSatisfy { $0 == 0xFF })
    }

    /// The error names the call, the byte it began at and strerror's text.
    @Test func errorsSayWhere() {
        let file = TemporaryFile()
        let readOnly = open("/proc/self/fd/\(file.descriptor)", O_RDONLY | O_CLOEXEC)
        defer { close(readOnly) }
        let error = #expect(throws: DescriptorIOError.self) { try Descriptor(readOnly).writeAll(pattern(10), at: 4096) }
        #expect(error == DescriptorIOError(.pwrite, errno: EBADF, offset: 4096))
        #expect(error?.description == "pwrite at byte 4096: Bad file descriptor")
        #expect(error?.isReaderGone == false)

        let pipe = Endpoints.pipe()
        #expect(throws: DescriptorIOError(.pread, errno: ESPIPE, offset: 7)) { try Descriptor(pipe.reading).readFully(count: 1, at: 7) }
    }
}
