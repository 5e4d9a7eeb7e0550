import MuEvalWire
import NIOCore

/// The replies in one text message from muevald, read as web_phone.py reads each message (its regexes see one
/// message at a time). Acks, 5,000 a second at 500 phones, are read here byte by byte; anything else (a
/// welcome, an error) from there on by MuEvalWire's WireReplyReader: its parse of every ack cost this client
/// a sixth of its CPU.
enum Replies {
    private static let ackHead = Array("<ack><key>seq</key><integer>".utf8)
    private static let ackTail = Array("</integer></ack>".utf8)

    static func read(_ message: ByteBuffer, _ handle: (WireMessage) -> Void) {
        message.withUnsafeReadableBytes { bytes in
            var at = 0
            while true {
                while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
                guard at < bytes.count else { return }
                guard let (seq, end) = ack(bytes, at) else { break }
                handle(.ack(seq: seq))
                at = end
            }
            var reader = WireReplyReader()
            reader.append(bytes[at...])
            while let reply = reader.next() { handle(reply) }
        }
    }

    /// `<ack><key>seq</key><integer>N</integer></ack>` at `start`: N and where the ack ends; nil for anything else.
    private static func ack(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> (Int64, Int)? {
        guard bytes.count - start > ackHead.count + ackTail.count,
              bytes[start..<(start + ackHead.count)].elementsEqual(ackHead) else { return nil }
        var at = start + ackHead.count, seq: Int64 = 0, digits = 0
        while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39, digits < 18 {
            seq = seq * 10 + Int64(bytes[at] - 0x30)
            at += 1
            digits += 1
        }
        guard digits > 0, bytes.count - at >= ackTail.count,
              bytes[at..<(at + ackTail.count)].elementsEqual(ackTail) else { return nil }
        return (seq, at + ackTail.count)
    }
}
