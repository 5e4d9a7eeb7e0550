import Foundation
import ReportCritique
import SessionAnalysis
import SessionAnalysisTestSupport
import StudyAnalysis
import XCTest

/// The report of a simulated session in headless Chromium (Debian's `chromium`, which `make test` installs).
/// The page writes what its script did into data attributes, so that `--dump-dom` shows it.
final class BrowserTests: AnalysisTestCase {
    var chromium = ""
    var index = ""

    override func setUp() async throws {
        try await super.setUp()
        guard let path = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first(where: FileManager.default.isExecutableFile) else {
            let reason = "SKIPPED: no chromium; install Debian's chromium package (`make deps`) to test the report in a browser"
            FileHandle.standardError.write(Data((reason + "\n").utf8))
            throw XCTSkip(reason)
        }
        chromium = path
        let session = directory + "/wordpress.sqlite"
        try await SimulatedSession.write(scenario: "wordpress", to: session)
        index = try ReportGenerator.generate(sessionFiles: [session], configuration: ReportConfiguration(), output: directory + "/report")
    }

    func testFilteringTheTimelineByAClassLeavesOnlyThatClassAndTheHeatmapsAreDrawn() throws {
        let (dom, log) = try run(["--dump-dom", "file://\(index)?class=UserInputEvent"])
        let timeline = try XCTUnwrap(firstTag("div", id: "timeline-events", in: dom))
        XCTAssertTrue(timeline.contains("data-ready=\"1\""), timeline)
        XCTAssertTrue(timeline.contains("data-classes-shown=\"UserInputEvent\""), timeline)
        let rows = dom.components(separatedBy: "<tr data-class=").dropFirst().map { $0.prefix(while: { $0 != " " && $0 != ">" }) }
        XCTAssertGreaterThan(rows.count, 10)
        XCTAssertEqual(Set(rows), ["\"UserInputEvent\""])

        let canvases = dom.components(separatedBy: "<canvas").dropFirst()
        XCTAssertGreaterThan(canvases.count, 2)
        for canvas in canvases {
            XCTAssertTrue(canvas.contains("data-drawn=\"1\""), "a heatmap canvas was not drawn: \(canvas.prefix(300))")
        }
        XCTAssertTrue(dom.contains("<body data-errors=\"0\""), "the page counted script errors")
        assertNoConsoleErrors(log)
    }

    func testUnfilteredTimelineShowsEveryClass() throws {
        let (dom, log) = try run(["--dump-dom", "file://\(index)"])
        let timeline = try XCTUnwrap(firstTag("div", id: "timeline-events", in: dom))
        XCTAssertTrue(timeline.contains("data-classes-shown=\"ApplicationEvent,CustomEvent,DeviceSensorEvent,UserInputEvent,UserInterfaceEvent\""), timeline)
        assertNoConsoleErrors(log)
    }

    func testScreenshotOfThePageIsNotBlank() throws {
        let png = directory + "/page.png"
        let (_, log) = try run(["--screenshot=\(png)", "--window-size=900,1400", "file://\(index)"])
        let share = try nonBackgroundShare(of: png)
        XCTAssertGreaterThan(share, 0.02, "the page looks blank (\(share) of its bytes differ from the background)")
        assertNoConsoleErrors(log)
    }

    /// The study report over the simulated session's screenshots: no script error, the heatmaps of all
    /// participants drawn, each participant's left undrawn until its <details> opens.
    func testStudyReportDrawsItsHeatmapsWithoutErrors() throws {
        let session = directory + "/wordpress.sqlite"
        let shots = try XCTUnwrap(try AnalyzedSession(path: session).results.first(Screenshots.self)?.shots)
        XCTAssertGreaterThan(shots.count, 1)
        let references = shots.prefix(2).map { ScreenshotReference(sessionPath: session, sha256: $0.blob.sha256, screen: $0.screen) }
        let results = try sampleStudyResults(path: session, posts: references[0], edit: references[1])
        let study = try StudyReportWriter().write(results, to: directory + "/study", links: StudyReportLinks())
        let (dom, log) = try run(["--dump-dom", "file://\(study)"])
        XCTAssertTrue(dom.contains("<body data-errors=\"0\""), "the page counted script errors")
        let canvases = dom.components(separatedBy: "<canvas").dropFirst().map { String($0.prefix { $0 != ">" }) }
        XCTAssertEqual(canvases.count, 4)
        XCTAssertEqual(canvases.filter { $0.contains("data-drawn=\"1\"") }.count, 2, "\(canvases)")
        XCTAssertEqual(canvases.filter { $0.contains("data-drawn=\"without-screenshot\"") }.count, 1, "\(canvases)")
        XCTAssertEqual(canvases.filter { $0.contains("data-drawn=\"0\"") }.count, 1, "the folded participant's heatmap: \(canvases)")
        assertNoConsoleErrors(log)
    }

    // MARK: Helpers

    /// Runs headless Chromium to the end of its virtual time; returns standard output and the log.
    private func run(_ arguments: [String]) throws -> (String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromium)
        process.arguments = ["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
                             "--user-data-dir=\(directory)/chromium-profile", "--enable-logging=stderr", "--v=0",
                             "--virtual-time-budget=10000"] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both pipes while Chromium runs: a full pipe would block it.
        let outputData = Locked(Data())
        let reader = Thread { outputData.value = output.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(process.terminationStatus, 0, log)
        return (String(decoding: outputData.value, as: UTF8.self), log)
    }

    /// The report logs nothing: any console message (Chromium logs them as CONSOLE, whatever their level)
    /// or uncaught exception is a failure.
    private func assertNoConsoleErrors(_ log: String, file: StaticString = #filePath, line: UInt = #line) {
        let messages = log.split(separator: "\n").filter { $0.contains(":CONSOLE") || $0.contains("Uncaught") }
        XCTAssertEqual(messages, [], "browser console messages", file: file, line: line)
    }

    private func firstTag(_ tag: String, id: String, in html: String) -> String? {
        guard let start = html.range(of: "<\(tag) class=\"[a-z]*\" id=\"\(id)\"[^>]*>", options: .regularExpression)
            ?? html.range(of: "<\(tag) id=\"\(id)\"[^>]*>", options: .regularExpression) else { return nil }
        return String(html[start])
    }

    /// The share of the page's pixels that differ from its top-left pixel (the background): 0 for a blank page.
    /// python3 (one of the Makefile's test tools) decodes the PNG with its zlib; the scanline filters are undone here.
    private func nonBackgroundShare(of png: String) throws -> Double {
        let script = """
            import sys, zlib, struct
            data = open(sys.argv[1], 'rb').read()
            pos, idat = 8, b''
            while pos < len(data):
                length, kind = struct.unpack('>I4s', data[pos:pos + 8])
                if kind == b'IHDR': width, height, depth, colour = struct.unpack('>IIBB', data[pos + 8:pos + 18])
                if kind == b'IDAT': idat += data[pos + 8:pos + 8 + length]
                pos += 12 + length
            assert depth == 8 and colour in (2, 6), 'unexpected PNG format'
            bpp = 3 if colour == 2 else 4
            raw, stride, rows, previous, at = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp), 0
            for _ in range(height):
                kind, row = raw[at], bytearray(raw[at + 1:at + 1 + stride])
                at += 1 + stride
                for i in range(stride):
                    a = row[i - bpp] if i >= bpp else 0
                    b = previous[i]
                    c = previous[i - bpp] if i >= bpp else 0
                    if kind == 1: row[i] = (row[i] + a) & 255
                    elif kind == 2: row[i] = (row[i] + b) & 255
                    elif kind == 3: row[i] = (row[i] + (a + b) // 2) & 255
                    elif kind == 4:
                        p = a + b - c
                        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                        row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
                rows.append(bytes(row))
                previous = row
            background = rows[0][:bpp]
            differing = sum(1 for row in rows for x in range(0, stride, bpp) if row[x:x + bpp] != background)
            print(differing / (width * height))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, png]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return try XCTUnwrap(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), "python3 could not read \(png)")
    }
}

/// A value written by one thread and read by another after it finished.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
