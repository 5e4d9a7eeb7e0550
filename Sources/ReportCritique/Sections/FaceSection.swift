internal import Foundation

/// The tester's face in the face video (docs/REPORTS.md, "Face"): how much of the time a face is in the
/// picture and turned to the phone, and when the tester looked away, on the session's clock.
struct FaceSection: ReportSection {
    /// Said in every report with this section, whatever was found.
    static let scope = "<p class=\"legend\">Found by OpenCV's Haar cascades (frontal and profile faces, Debian's opencv-data), "
        + "a few frames a second. <strong>Detected:</strong> whether a face is in the picture, where, and whether it is turned "
        + "to the phone; looking away is a face turned aside or none. <strong>Not detected:</strong> where the eyes look "
        + "(a face turned to the phone may look past it), who the person is, and emotions or expressions.</p>"

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
                html += timeline(spans, from: face.offset, to: end)
                guard !spans.isEmpty else { return html + "<p>The tester did not look away.</p>" }
                html += "<table class=\"face\"><tr><th>Looked away</th><th>For</th></tr>"
                for span in spans {
                    html += "<tr><td>\(Format.clock(span.lowerBound)) – \(Format.clock(span.upperBound))</td>"
                        + "<td class=\"num\">\(Format.duration(span.upperBound - span.lowerBound))</td></tr>"
                }
                return html + "</table>"
            }
        }
    }

    /// The video's stretch of the session as a bar, its look-aways marked (times from the session's start).
    private func timeline(_ spans: [ClosedRange<Double>], from start: Double, to end: Double) -> String {
        let length = max(end - start, 0.001)
        func x(_ time: Double) -> String { String(format: "%.1f", (time - start) / length * 600) }
        let marks = spans.map { span in
            "<rect x=\"\(x(span.lowerBound))\" y=\"0\" width=\"\(String(format: "%.1f", max((span.upperBound - span.lowerBound) / length * 600, 1)))\" "
                + "height=\"16\" fill=\"#c0392b\"><title>looked away \(Format.clock(span.lowerBound)) – \(Format.clock(span.upperBound))</title></rect>"
        }.joined()
        return "<svg class=\"face-timeline\" viewBox=\"0 0 600 16\" width=\"600\" height=\"16\" role=\"img\" "
            + "aria-label=\"Face video from \(Format.clock(start)) to \(Format.clock(end)), looking away in red\">"
            + "<rect x=\"0\" y=\"0\" width=\"600\" height=\"16\" fill=\"#1e8449\" opacity=\"0.35\"/>\(marks)</svg>"
            + "<p class=\"legend\">\(Format.clock(start)) to \(Format.clock(end)) of the session; red: looking away.</p>"
    }
}
