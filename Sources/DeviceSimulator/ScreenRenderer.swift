internal import SessionModel

/// Draws a simulated screen as a wireframe in the look of iOS 4: status bar, navigation bar, and every
/// element by its class. Text is drawn "greeked" (a bar per word, a gap per space) so that no font is
/// needed; words still show where they are and how long, which is what a screenshot tells an analyst.
struct ScreenRenderer {
    private enum Colour: UInt8, CaseIterable {
        case white, background, black, navigationBar, text, placeholder, border, buttonText, separator, image, toolbar, barButton, on

        var rgb: PNGEncoder.RGB {
            switch self {
            case .white: .init(255, 255, 255)
            case .background: .init(219, 226, 237)
            case .black: .init(0, 0, 0)
            case .navigationBar: .init(109, 132, 162)
            case .text: .init(34, 34, 34)
            case .placeholder: .init(178, 178, 178)
            case .border: .init(160, 160, 160)
            case .buttonText: .init(50, 79, 133)
            case .separator: .init(224, 224, 224)
            case .image: .init(200, 200, 200)
            case .toolbar: .init(40, 40, 40)
            case .barButton: .init(80, 100, 130)
            case .on: .init(60, 140, 230)
            }
        }
    }

    static let statusBarHeight = 20.0
    static let navigationBarHeight = 44.0
    static let rowHeight = 44.0
    /// Greeked glyphs: a character is this wide and a line this high, in points.
    private static let glyphWidth = 6.0
    private static let glyphHeight = 8.0

    private let width: Int
    private let height: Int
    private let scale: Double
    private var pixels: [UInt8]

    private init(device: DeviceModel) {
        width = device.width * device.scale
        height = device.height * device.scale
        scale = Double(device.scale)
        pixels = [UInt8](repeating: Colour.white.rawValue, count: width * height)
    }

    /// The PNG of `screen`.
    static func png(of screen: Screen) -> [UInt8] {
        var renderer = ScreenRenderer(device: screen.device)
        renderer.draw(screen)
        return PNGEncoder.encode(width: renderer.width, height: renderer.height,
                                 palette: Colour.allCases.map(\.rgb), pixels: renderer.pixels)
    }

    private mutating func draw(_ screen: Screen) {
        let w = Double(screen.device.width)
        fill(Rect(x: 0, y: 0, width: w, height: Double(screen.device.height)), .background)
        fill(Rect(x: 0, y: 0, width: w, height: Self.statusBarHeight), .black)
        text("Carrier", in: Rect(x: 6, y: 0, width: 60, height: Self.statusBarHeight), .white)
        text("9:41 AM", in: Rect(x: w / 2 - 21, y: 0, width: 50, height: Self.statusBarHeight), .white)
        if let title = screen.view.title {
            fill(Rect(x: 0, y: Self.statusBarHeight, width: w, height: Self.navigationBarHeight), .navigationBar)
            let titleWidth = Double(title.count) * Self.glyphWidth
            text(title, in: Rect(x: max(0, (w - titleWidth) / 2), y: Self.statusBarHeight, width: titleWidth + 1, height: Self.navigationBarHeight), .white)
        }
        for element in screen.view.elements { draw(element, text: screen.displayedText(of: element)) }
    }

    private mutating func draw(_ element: ElementSpec, text shown: String?) {
        let frame = element.frame
        let inset = Rect(x: frame.x + 8, y: frame.y, width: max(1, frame.width - 16), height: frame.height)
        switch element.class {
        case "UIButton", "UISegmentedControl":
            fill(frame, .white)
            stroke(frame, .border)
            centred(element.title ?? "", in: frame, .buttonText)
        case "UINavigationButton":
            fill(frame, .barButton)
            centred(element.title ?? "", in: frame, .white)
        case "UITextField", "UISearchBar":
            fill(frame, .white)
            stroke(frame, .border)
            if let shown, !shown.isEmpty { text(shown, in: inset, .text) } else { text(element.placeholder ?? "", in: inset, .placeholder) }
        case "UITextView":
            fill(frame, .white)
            stroke(frame, .separator)
            let lines = wrapped(shown.flatMap { $0.isEmpty ? nil : $0 } ?? element.placeholder ?? "", width: inset.width)
            for (index, line) in lines.enumerated() where Double(index + 1) * 16 <= frame.height {
                text(line, in: Rect(x: inset.x, y: frame.y + 4 + Double(index) * 16, width: inset.width, height: 16),
                     shown?.isEmpty == false ? .text : .placeholder)
            }
        case "UILabel":
            text(shown ?? element.title ?? "", in: frame, .text)
        case "UITableView":
            fill(frame, .white)
            for (index, row) in (element.rows ?? []).enumerated() {
                let y = frame.y + Double(index) * Self.rowHeight
                guard y + Self.rowHeight <= frame.y + frame.height else { break }
                text(row, in: Rect(x: inset.x, y: y, width: inset.width, height: Self.rowHeight), .text)
                fill(Rect(x: frame.x + 8, y: y + Self.rowHeight - 1, width: frame.width - 8, height: 1), .separator)
            }
        case "UIImageView":
            fill(frame, .image)
        case "UISwitch":
            fill(frame, .on)
            fill(Rect(x: frame.x + frame.width / 2, y: frame.y + 2, width: frame.width / 2 - 2, height: frame.height - 4), .white)
        case "UIToolbar", "UITabBar":
            fill(frame, .toolbar)
            centred(element.title ?? "", in: frame, .white)
        default:
            stroke(frame, .separator)
        }
    }

    private func wrapped(_ text: String, width: Double) -> [String] {
        let perLine = max(1, Int(width / Self.glyphWidth))
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !line.isEmpty, line.count + 1 + word.count > perLine {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        return line.isEmpty ? lines : lines + [line]
    }

    private mutating func centred(_ string: String, in frame: Rect, _ colour: Colour) {
        let textWidth = min(frame.width, Double(string.count) * Self.glyphWidth)
        text(string, in: Rect(x: frame.x + (frame.width - textWidth) / 2, y: frame.y, width: textWidth + 1, height: frame.height), colour)
    }

    /// One line of greeked text, vertically centred in `frame`, cut off at its right edge.
    private mutating func text(_ string: String, in frame: Rect, _ colour: Colour) {
        let y = frame.y + (frame.height - Self.glyphHeight) / 2
        for (index, character) in string.enumerated() where !character.isWhitespace {
            let x = frame.x + Double(index) * Self.glyphWidth
            guard x + Self.glyphWidth <= frame.x + frame.width else { break }
            // Glyphs fill their whole cell: the letters of a word join into one bar, and a space leaves a gap.
            fill(Rect(x: x, y: y, width: Self.glyphWidth, height: Self.glyphHeight), colour)
        }
    }

    private mutating func stroke(_ frame: Rect, _ colour: Colour) {
        fill(Rect(x: frame.x, y: frame.y, width: frame.width, height: 1), colour)
        fill(Rect(x: frame.x, y: frame.y + frame.height - 1, width: frame.width, height: 1), colour)
        fill(Rect(x: frame.x, y: frame.y, width: 1, height: frame.height), colour)
        fill(Rect(x: frame.x + frame.width - 1, y: frame.y, width: 1, height: frame.height), colour)
    }

    /// Fills a rectangle given in points, clipped to the screen.
    private mutating func fill(_ frame: Rect, _ colour: Colour) {
        let x0 = max(0, Int((frame.x * scale).rounded())), x1 = min(width, Int(((frame.x + frame.width) * scale).rounded()))
        let y0 = max(0, Int((frame.y * scale).rounded())), y1 = min(height, Int(((frame.y + frame.height) * scale).rounded()))
        guard x0 < x1, y0 < y1 else { return }
        for row in y0..<y1 {
            let start = row * width
            for column in x0..<x1 { pixels[start + column] = colour.rawValue }
        }
    }
}
