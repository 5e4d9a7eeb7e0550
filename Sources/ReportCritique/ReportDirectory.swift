internal import Foundation

/// What every report directory shares, the session report's and the study report's: index.html in the same
/// frame (header, navigation, sections), report.css, report.js and shots/. Nothing refers to the network.
enum ReportDirectory {
    /// One `<section>` of a page: its anchor, heading and HTML, written into the page when its turn comes.
    struct Part {
        let id: String
        let title: String
        let write: (ReportOutput) throws -> Void

        init(id: String, title: String, write: @escaping (ReportOutput) throws -> Void) {
            (self.id, self.title, self.write) = (id, title, write)
        }

        init(id: String, title: String, body: String) {
            self.init(id: id, title: title) { try $0.append(body) }
        }
    }

    /// Creates `directory` with its shots/ folder, and writes the stylesheet and script; returns the shots folder.
    static func create(_ directory: String) throws -> String {
        let shots = directory + "/shots"
        do {
            try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        } catch {
            throw ReportError.cannotWrite(path: directory, reason: error.localizedDescription)
        }
        try write(ReportAssets.css, to: directory + "/report.css")
        try write(ReportAssets.javascript, to: directory + "/report.js")
        return shots
    }

    static func write(_ text: String, to path: String) throws {
        try writeFile(path, Array(text.utf8))
    }

    /// A plain write, without the temporary file and fsync of Foundation's writes: they cost a second per
    /// thousand screenshots, and a half-written report is simply written again.
    static func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        guard let file = fopen(path, "wb") else {
            throw ReportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard fclose(file) == 0, written == bytes.count else {
            throw ReportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// index.html: `title` and `subtitle` are text, each part's body HTML.
    static func page(title: String, subtitle: String, parts: [Part]) throws -> String {
        let output = ReportOutput()
        try writePage(title: title, subtitle: subtitle, parts: parts, to: output)
        return output.text
    }

    /// index.html into `output`, part after part, so that only the part being written is in memory.
    static func writePage(title: String, subtitle: String, parts: [Part], to output: ReportOutput) throws {
        let navigation = parts.map { "<a href=\"#\($0.id)\">\(esc($0.title))</a>" }.joined()
        try output.append("""
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(esc(title))</title><link rel="icon" href="data:,"><link rel="stylesheet" href="report.css"></head>
            <body data-errors="0"><header><h1>\(esc(title))</h1><p class="generated">\(esc(subtitle)) · generated \(Format.date(Date().timeIntervalSince1970))</p>
            <nav>\(navigation)</nav></header>
            <main>

            """)
        for (number, part) in parts.enumerated() {
            try output.append((number == 0 ? "" : "\n") + "<section id=\"\(part.id)\" class=\"section\"><h2>\(esc(part.title))</h2>")
            try part.write(output)
            try output.append("</section>")
        }
        try output.append("""

            </main>
            <script src="report.js"></script>
            </body></html>
            """)
    }
}
