import Foundation
import MuEvalWire
import OrderedCollections
import PageRecording
import ReportCritique
import SessionAnalysis
import SessionAnalysisTestSupport
import Testing
import WireProtocol

/// A web session that recorded its page (capture.js's `dom`) has its heatmaps and problems drawn over the page as it
/// was at their screenshot, in a sandboxed frame; a session without page records keeps its screenshots (issue 55).
@Suite struct PageUnderHeatmapTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-page-report-\(UUID().uuidString.prefix(8))").path
    private let start = 1_700_000_000.0
    /// Long enough to be stored apart, as an asset of the session file.
    private let rules = "h1 { color: rgb(12, 34, 56); }\n" + String(repeating: ".filler { margin: 0; }\n", count: 40)

    /// A device's page record as muevald stores it (PageRecordEvent): sanitised, long rules kept apart as assets.
    private func add(_ builder: JournalBuilder, _ pageClass: PageRecordClass, at time: Double, _ record: [String: Any]) throws {
        var sanitizer = PageRecordSanitizer(mode: .storing(assetBytes: PageRecordSanitizer.defaultAssetBytes))
        let json = try JSONSerialization.data(withJSONObject: record)
        let sanitised = sanitizer.sanitise(Array(json), as: pageClass)
        let dom = try #require(sanitised)
        var fields: OrderedDictionary<String, PlistValue> = ["dom": .string(String(decoding: dom, as: UTF8.self))]
        if !sanitizer.assets.isEmpty { fields["assets"] = .array(sanitizer.assets.map { .data(Array($0.css.utf8)) }) }
        builder.add(pageClass.rawValue, at: time, fields)
    }

    /// A view with rage taps on its button; with `page`, the page recorded: a snapshot just after the screenshot, a
    /// change before the page settled, and one long after.
    private func session(_ name: String, page: Bool) async throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let builder = try JournalBuilder(path: directory + "/\(name).sqlite")
        builder.viewDidAppear(at: start, view: "BarView", transition: "launch", stack: ["BarView"], screenshot: Array("PNG of \(name)".utf8))
        if page {
            try add(builder, .snapshot, at: start + 0.3, ["s": 1, "n": 0, "doctype": "html", "viewport": ["w": 320, "h": 480],
                "scroll": [[1, 0, 0]], "root": ["i": 1, "c": [["i": 2, "t": "html", "c": [
                    ["i": 3, "t": "head", "c": [["i": 4, "t": "style", "css": rules], ["i": 5, "t": "script", "c": [["i": 6, "x": "alert(1)"]]]]],
                    ["i": 7, "t": "body", "c": [
                        ["i": 8, "t": "h1", "c": [["i": 9, "x": "Bar app"]]],
                        ["i": 10, "t": "button", "a": ["onclick": "alert(2)", "class": "open"], "c": [["i": 11, "x": "Open details"]]],
                        ["i": 12, "t": "p", "a": ["title": #"say "hi""#], "c": [["i": 13, "x": "</style><script>alert(3)</script>"]]],
                    ]],
                ]]]]])
            try add(builder, .mutations, at: start + 1.2, ["s": 1, "n": 1, "add": [["p": 7, "b": NSNull(), "n": ["i": 14, "t": "p", "c": [["i": 15, "x": "Loaded later"]]]]]])
            try add(builder, .mutations, at: start + 30, ["s": 1, "n": 2, "text": [[15, "Too late"]]])
        }
        for tap in 0..<3 { builder.tap(at: start + 1 + Double(tap) * 0.25, x: 100, y: 200, view: "BarView") }
        try await builder.finish()
        return builder.path
    }

    private func report(_ session: String, into name: String) throws -> String {
        let index = try ReportGenerator.generate(sessionFiles: [session], configuration: ReportConfiguration(), output: directory + "/" + name)
        return try String(contentsOfFile: index, encoding: .utf8)
    }

    /// The values of an attribute in `html`, unescaped.
    private func attributeValues(_ name: String, in html: String) -> [String] {
        html.components(separatedBy: " \(name)=\"").dropFirst().map { part in
            String(part.prefix { $0 != "\"" }).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
                .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    /// A section of index.html, by its id.
    private func section(_ id: String, of html: String) throws -> String {
        let from = try #require(html.range(of: "<section id=\"\(id)\""))
        return html[from.lowerBound...].components(separatedBy: "</section>")[0]
    }

    @Test func theHeatmapAndTheProblemsAreDrawnOverThePageAsItWasAtTheScreenshot() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let html = try report(try await session("web", page: true), into: "web")
        let heatmaps = try section("heatmaps", of: html)
        let frames = heatmaps.components(separatedBy: "<iframe ").dropFirst()
        #expect(frames.count == 1)
        let frame = try #require(frames.first)
        #expect(frame.hasPrefix(#"class="page" sandbox="" inert tabindex="-1""#), "sandboxed without allow-scripts")
        #expect(frame.contains(#"width="320" height="480" style="transform:scale(0.75)""#))
        #expect(heatmaps.contains(#"data-shot="" data-page="1" data-touches="[[100,200],[100,200],[100,200]]""#), "the canvas goes over the page")

        let page = try #require(attributeValues("srcdoc", in: heatmaps).first)
        #expect(page.hasPrefix(#"<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'none';"#))
        #expect(page.contains("<h1>Bar app</h1>"))
        #expect(page.contains(#"<button class="open">Open details</button>"#))
        #expect(page.contains(#"<p title="say &quot;hi&quot;">&lt;/style&gt;&lt;script&gt;alert(3)&lt;/script&gt;</p>"#))
        #expect(page.contains("<style>" + rules + "</style>"), "the stylesheet stored apart is in the page")
        #expect(page.contains("<p>Loaded later</p>"), "a change before the page settled is shown")
        #expect(!page.contains("Too late"), "a change long after the screenshot is not")
        #expect(!page.lowercased().contains("<script"))
        #expect(!page.contains("alert(1)") && !page.contains("alert(2)") && !page.contains("onclick"))

        let problems = try section("problems", of: html)
        #expect(problems.contains("Rage taps") || problems.contains("rage taps"), "\(problems.prefix(400))")
        let marked = try #require(problems.components(separatedBy: #"<span class="marked page-under" style="aspect-ratio:320 / 480">"#).dropFirst().first)
        #expect(marked.hasPrefix(#"<iframe class="page" sandbox="" inert"#))
        #expect(marked.contains(#"style="transform:scale(0.375)""#))
        #expect(attributeValues("srcdoc", in: problems).first == page)
    }

    @Test func aSessionWithoutPageRecordsKeepsItsScreenshotUnderTheHeatmap() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let html = try report(try await session("native", page: false), into: "native")
        let sha = BlobName(of: Array("PNG of native".utf8)).hex
        #expect(html.contains(#"<figure class="heatmap"><canvas width="320" height="480" data-shot="shots/\#(sha).png" data-touches="#))
        #expect(!html.contains("<iframe"))
        #expect(html.contains(#"<img src="shots/\#(sha).png""#), "the problems are marked on the screenshot")
    }
}
