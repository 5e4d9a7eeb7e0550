import CMediaInput
import Testing

/// FFmpeg's libraries are loaded when a decoder first runs, not linked (Sources/CMediaInput): when one is missing,
/// transcription and the face scan fail with this message, which names the library and the package that brings it.
/// A major version no FFmpeg has stands for the missing library; the decoders' own tests show the real ones load.
struct MediaLibraryTests {
    @Test func aMissingLibraryIsNamedWithItsPackage() {
        var handle: UnsafeMutableRawPointer?
        var error = [CChar](repeating: 0, count: 512)
        let result = mueval_media_open_library("avformat", 1, &handle, &error, error.count)
        let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #expect(result == -1)
        #expect(handle == nil)
        #expect(message.hasPrefix("FFmpeg's libavformat.so.1 could not be loaded: libavformat.so.1: cannot open shared object file"), "\(message)")
        #expect(message.hasSuffix("; install libavformat1"), "\(message)")
    }
}
