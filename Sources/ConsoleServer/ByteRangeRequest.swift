internal import Foundation
internal import WireProtocol

/// An HTTP `Range: bytes=…` request against a file of `total` bytes (RFC 9110, section 14): what the
/// media endpoint serves. At most `limit` bytes per answer, so that no request holds a whole stream:
/// a browser asks again from where the answer ended.
///
/// The header comes from the browser, so reading it is total: positions of any length (beyond
/// `Int64.max` they stand for "past any file"), any order, any number of ranges give an answer, never a trap.
struct ByteRangeRequest: Equatable {
    enum Answer: Equatable {
        /// 200: the whole file (no Range header, or one this server does not take apart).
        case whole
        /// 206 with `Content-Range: bytes lower-(upper-1)/total`.
        case partial(Range<Int64>)
        /// 416 with `Content-Range: bytes */total`: nothing of the file is in the range.
        case unsatisfiable
    }

    static func answer(_ header: String?, total: Int64, limit: Int64) -> Answer {
        guard let header, total >= 0, limit > 0 else { return .whole }
        let spec = header.trimmingCharacters(in: .whitespaces)
        // Range units are case-insensitive. Anything but one byte range (several, another unit, a
        // malformed one) is answered with the whole file, as RFC 9110 allows a server to.
        guard spec.lowercased().hasPrefix("bytes="), !spec.contains(",") else { return .whole }
        let parts = spec.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        let first = parts[0].trimmingCharacters(in: .whitespaces)
        let last = parts[1].trimmingCharacters(in: .whitespaces)
        let lower: Int64
        let upper: Int64
        switch (position(first), position(last)) {
        case (let first?, let last?):
            // last-pos < first-pos makes the range invalid: ignored, as RFC 9110 says.
            guard first <= last else { return .whole }
            (lower, upper) = (first, min(total, last.checkedAdding(1) ?? total))
        case (let first?, nil) where last.isEmpty:
            (lower, upper) = (first, total)
        case (nil, let suffix?) where first.isEmpty:
            // The last `suffix` bytes; a suffix of 0 selects nothing.
            guard suffix > 0 else { return .unsatisfiable }
            (lower, upper) = (suffix < total ? total - suffix : 0, total)
        default:
            return .whole
        }
        guard lower < total, let range = Range.checked(lower, min(upper, lower.checkedAdding(limit) ?? upper)), !range.isEmpty else {
            return .unsatisfiable
        }
        return .partial(range)
    }

    /// A byte position: ASCII digits only (no sign, no exponent); a number beyond `Int64.max` is
    /// `Int64.max`, which is past the end of any file.
    static func position(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text) ?? .max
    }
}
