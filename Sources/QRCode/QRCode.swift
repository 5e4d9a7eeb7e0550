internal import CQRencode

/// A QR code as a square of modules, made by Debian's libqrencode, drawn as SVG (the console's
/// enrolment link) or as text for a terminal (`muevalctl pool link --qr`).
public struct QRCode: Sendable, Equatable {
    /// How much of the symbol may be lost and still read; more costs a larger symbol.
    public enum Correction: Sendable {
        case low, medium, quartile, high

        var level: QRecLevel {
            switch self {
            case .low: QR_ECLEVEL_L
            case .medium: QR_ECLEVEL_M
            case .quartile: QR_ECLEVEL_Q
            case .high: QR_ECLEVEL_H
            }
        }
    }

    /// Modules per side (21 for version 1, 4 more per version, up to 177).
    public let size: Int
    /// Row by row, `true` for a dark module.
    private let modules: [Bool]

    /// The smallest symbol that holds `text`'s UTF-8 bytes (8-bit mode).
    public init(encoding text: String, correction: Correction = .medium) throws(QRCodeError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw .empty }
        guard let count = Int32(exactly: bytes.count), let symbol = bytes.withUnsafeBufferPointer({ buffer in
            QRcode_encodeData(count, buffer.baseAddress, 0, correction.level)
        }) else {
            throw .tooLong(bytes: bytes.count)
        }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        size = width
        // Bit 0 of each byte is the module's colour; the others say which part of the symbol it is.
        modules = (0..<width * width).map { symbol.pointee.data[$0] & 1 == 1 }
    }

    public func isDark(row: Int, column: Int) -> Bool {
        modules[row * size + column]
    }

    /// Dark modules in all, for checking a drawing against the symbol.
    public var darkModules: Int { modules.lazy.filter { $0 }.count }

    /// A standalone SVG: one path of unit squares on a white square with a quiet zone of `margin`
    /// modules (the standard asks for 4), scaled by whoever shows it (`viewBox` in modules).
    public func svg(margin: Int = 4) -> String {
        let side = size + 2 * margin
        var path = ""
        for row in 0..<size {
            for column in 0..<size where isDark(row: row, column: column) {
                path += "M\(column + margin) \(row + margin)h1v1h-1z"
            }
        }
        return ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(side) \##(side)" shape-rendering="crispEdges">"##
            + ##"<rect width="\##(side)" height="\##(side)" fill="#fff"/><path fill="#000" d="\##(path)"/></svg>"##
    }

    /// Text for a terminal: two module rows per line in Unicode half blocks, `margin` modules of quiet
    /// zone around. A terminal's text is light on dark more often than not, so by default the light
    /// modules are the drawn ones (as `qrencode -t UTF8`); `darkOnLight` draws the dark ones instead.
    public func terminal(margin: Int = 2, darkOnLight: Bool = false) -> String {
        let side = size + 2 * margin
        func drawn(_ row: Int, _ column: Int) -> Bool {
            let inside = (margin..<margin + size).contains(row) && (margin..<margin + size).contains(column)
            let dark = inside && isDark(row: row - margin, column: column - margin)
            return dark == darkOnLight
        }
        var lines: [String] = []
        for top in stride(from: 0, to: side, by: 2) {
            var line = ""
            for column in 0..<side {
                // Past the last row (an odd side) counts as not drawn.
                switch (drawn(top, column), top + 1 < side && drawn(top + 1, column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Why no QR code could be made.
public enum QRCodeError: Error, Equatable, CustomStringConvertible {
    case empty
    /// More than the largest symbol holds at the chosen correction (2331 bytes at medium).
    case tooLong(bytes: Int)

    public var description: String {
        switch self {
        case .empty: "a QR code needs some text to hold"
        case .tooLong(let bytes): "\(bytes) bytes do not fit in a QR code: use a shorter link"
        }
    }
}
