internal import CVideoDecode
internal import DescriptorIO
internal import Foundation

/// The frames the scan looks at, decoded here and written to the script's standard input.
extension FaceScanner {
    /// Decodes the video and writes each frame kept to the script: a header (seconds as a little-endian double,
    /// width and height as little-endian 32-bit integers), then width × height bytes of grey. Returns why the video
    /// could not be decoded, or nil when every frame kept was sent (or the script stopped reading).
    func feed(video: String, to socket: Descriptor) -> String? {
        var error = [CChar](repeating: 0, count: 256)
        func reason() -> String { String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        // Decoding runs here, not in the script's process: the timeout bounds it too.
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let limits = mueval_video_limits(samples_per_second: samplesPerSecond, max_samples: Int64(maxSamples),
                                         max_width: Int32(clamping: maxFrameWidth), max_height: Int32(clamping: maxFrameHeight),
                                         deadline: Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + timeout)
        guard let decoder = mueval_video_open(video, limits, &error, error.count) else { return reason() }
        defer { mueval_video_close(decoder) }
        var time = 0.0, width: Int32 = 0, height: Int32 = 0
        var pixels: UnsafePointer<UInt8>?
        while true {
            let got = mueval_video_next(decoder, &time, &width, &height, &pixels, &error, error.count)
            if got < 0 { return reason() }
            guard got == 1, let pixels, let columns = UInt32(exactly: width), let rows = UInt32(exactly: height) else { break }
            var header = [UInt8]()
            header.reserveCapacity(16)
            withUnsafeBytes(of: time.bitPattern.littleEndian) { header.append(contentsOf: $0) }
            withUnsafeBytes(of: columns.littleEndian) { header.append(contentsOf: $0) }
            withUnsafeBytes(of: rows.littleEndian) { header.append(contentsOf: $0) }
            do {
                try socket.sendAll(header)
                try socket.sendAll(UnsafeRawBufferPointer(start: pixels, count: Int(columns) * Int(rows)))
            } catch {
                // The script gone (it could not scan, or was killed): nothing more to send.
                break
            }
        }
        return nil
    }
}
