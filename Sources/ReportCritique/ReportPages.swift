internal import Foundation
internal import MuEvalWire
internal import PageRecording
internal import SessionAnalysis
internal import SessionModel
internal import WireProtocol

/// The page at a screenshot of a web session recorded with capture.js's `dom` (issue 55; docs/REPORTS.md, "The page
/// under the heatmaps"): the page rebuilt from its records, as a static document for a sandboxed frame.
struct ShotPage {
    /// The document, for the frame's `srcdoc`.
    let html: String
    /// The window it was shown in, in CSS pixels: the frame's size.
    let viewport: Size
}

enum ReportPages {
    /// The frame's own policy, beside its sandbox (no `allow-scripts`) and whatever policy the report is served under:
    /// no script in any form, nothing fetched but `data:` images and fonts, styles only inline. Opened from `file://`
    /// the report has no policy of its own; this one holds there too.
    static let policy = "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; "
        + "frame-src 'none'; connect-src 'none'; media-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"

    /// Put first in each page's head: its policy, its encoding, and no scroll bars (a phone's are drawn over the page,
    /// a desktop browser's would take its width).
    static let head = #"<meta http-equiv="Content-Security-Policy" content="\#(policy)"><meta charset="utf-8">"#
        + "<style>html{scrollbar-width:none}html::-webkit-scrollbar{display:none}</style>"

    /// How many bytes of pages one session's problems carry, at most: each problem shows its page in a frame of its
    /// own (a `srcdoc` cannot be shared), and a long session has thousands. The problems after it show the screenshot.
    static let problemBytes = 8 << 20

    /// The page at each screenshot, by screenshot index; empty for a session without page records.
    static func pages(of analysis: AnalyzedSession) throws -> [Int: ShotPage] {
        let snapshots = analysis.results.first(Overview.self)?.eventsPerClass
            .first { $0.eventClass == PageRecordClass.snapshot.rawValue }?.count ?? 0
        guard snapshots > 0, let screenshots = analysis.results.first(Screenshots.self), !screenshots.shots.isEmpty else { return [:] }
        let pages = try self.pages(in: analysis.journal, at: screenshots.shots.indices.map { (screenshots.pageTime(of: $0), screenshots.shots[$0].screen) })
        return Dictionary(uniqueKeysWithValues: pages.enumerated().compactMap { index, page in page.map { (index, $0) } })
    }

    /// The page at each of `shots` (a device time, and the screen when the page recorded no window) in the session of
    /// `journal`, in their order; nil where no snapshot had come yet (or the session recorded no page).
    static func pages(in journal: SessionJournal, at shots: [(time: Double, screen: Size?)]) throws -> [ShotPage?] {
        var sampler = PageSampler(times: shots.map(\.time))
        try journal.forEachStoredEvent(classes: PageRecordClass.names) { event in
            guard sampler.wantsMore, let pageClass = PageRecordClass(rawValue: event.eventClass),
                  let payload = try? TypedJSON.decodeLeavingBlobs(Array(event.payload.utf8)),
                  case let (dom, isCurrent)? = PageRecordEvent.record(in: payload) else { return }
            sampler.add(pageClass, time: event.timestamp, dom: Array(dom.utf8), isCurrent: isCurrent)
        }
        let stylesheets = Stylesheets(journal: journal)
        let writer = PageHTML(head: head, remoteImages: false, asset: stylesheets.rules)
        return zip(sampler.finish(), shots).map { state, shot in
            let window = state?.viewport.flatMap { plausibleScreen(Size(width: $0.width, height: $0.height)) }
            guard let state, let viewport = window ?? plausibleScreen(shot.screen) else { return nil }
            return ShotPage(html: writer.document(state), viewport: viewport)
        }
    }

    /// Stylesheets stored apart, each read once from the session file (every screenshot's page names them again).
    private final class Stylesheets {
        let journal: SessionJournal
        var read: [String: String?] = [:]

        init(journal: SessionJournal) {
            self.journal = journal
        }

        func rules(_ sha256: String) -> String? {
            if let rules = read[sha256] { return rules }
            let rules = (try? journal.blob(sha256: sha256)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
            read[sha256] = rules
            return rules
        }
    }
}

/// The page in a frame `width` CSS pixels wide (its height as the window's in proportion): sandboxed without
/// `allow-scripts` (nor forms, popups or navigation of the report), inert, under its own policy (`ReportPages.policy`).
func pageFrame(_ page: ShotPage, width: Double, title: String) -> String {
    // Four decimals, trailing zeros left out: 0.75, 0.6154.
    var scale = String(format: "%.4f", width / page.viewport.width)
    while scale.hasSuffix("0") { scale.removeLast() }
    if scale.hasSuffix(".") { scale.removeLast() }
    return """
        <iframe class="page" sandbox="" inert tabindex="-1" title="\(esc(title))" width="\(Int(saturating: page.viewport.width))" \
        height="\(Int(saturating: page.viewport.height))" style="transform:scale(\(scale))" srcdoc="\(esc(page.html))"></iframe>
        """
}
