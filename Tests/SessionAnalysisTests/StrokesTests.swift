import Foundation
@testable import SessionAnalysis
import SessionModel
import Testing

/// The strokes kept in a file beside the session instead of memory (issue 41), and what reads them in one pass.
@Suite struct StrokesTests {
    private func scratch() throws -> (StrokeScratch, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strokes-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return (StrokeScratch(directory: directory), directory)
    }

    @Test func strokesReadBackAsWrittenWithTheirViewsAndTargetsShared() throws {
        let (scratch, directory) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let button = ElementReference(className: "UIButton", id: "publish", title: "Publish", frame: Rect(x: 1, y: 2, width: 3, height: 4))
        let count = StrokeScratch.internLimit + 10
        var written: [Stroke] = []
        for index in 0..<count {
            // Past the limit, views and targets are written out in full; every seventh stroke has neither.
            let view = index % 7 == 0 ? nil : scratch.interned(index < 20 ? "ComposeNoteViewController" : "View \(index)")
            let target = index % 7 == 0 ? nil : scratch.shared(index < 20 ? button : ElementReference(className: "Cell", id: "\(index)", title: nil, frame: nil))
            var stroke = Stroke(eventID: Int64(index), start: Double(index), view: view, origin: Point(x: 1, y: Double(index)), target: target)
            for step in 0..<(index % 4) { stroke.extend(to: Point(x: Double(step + 2), y: 0)) }
            stroke.end = Double(index) + 0.5
            stroke.isTap = index % 4 == 0
            try scratch.append(stroke)
            written.append(stroke)
        }
        let strokes = try scratch.finish()
        #expect(strokes.count == count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty, "the file has no name")
        let read = try strokes.collected()
        #expect(read == written)
        #expect(read[1].sharedTarget === read[2].sharedTarget)
        let storage = read[1..<3].map { $0.view?.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) } }
        #expect(storage[0] != nil && storage[0] == storage[1], "one name's storage for the strokes on one view")
        #expect(try strokes.collected() == written, "read again, from the start")
    }

    @Test func aSessionWithoutTouchesHasNoStrokesFile() throws {
        let (scratch, directory) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let strokes = try scratch.finish()
        #expect(strokes.count == 0)
        try strokes.forEach { _, _ in Issue.record("a stroke in an empty session") }
    }

    @Test func theSpanCounterCountsLikeCountingEachTime() {
        let spans: [ClosedRange<Double>?] = [0...10, 5...5, 3...Double.infinity, nil, 10...20, 0...10]
        let times: [Double] = [-1, 0, 0, 2.5, 5, 5, 7, 10, 10, 11, 20, 21, 1e300]
        var counter = SpanCounter(spans.compactMap { $0 })
        times.shuffled().forEach { counter.add($0) }
        #expect(counter.counts(in: spans) == spans.map { span in span.map { span in times.count { span.contains($0) } } ?? 0 })
    }

    @Test func latencyIsToTheFirstUpdateAtOrAfterTheTouch() {
        let responses = InputResponses(updates: [1, 2, 2, 5])
        #expect(responses.latency(after: 0) == 1)
        #expect(responses.latency(after: 2) == 0)
        #expect(responses.latency(after: 2.5) == 2.5)
        #expect(responses.latency(after: 5.5) == nil)
        #expect(InputResponses(updates: []).latency(after: 0) == nil)
    }
}
