internal import SessionAnalysis
internal import StudyAnalysis

/// The pages under the study report's heatmaps and problems: for each screenshot of a web session that recorded its
/// page, the page as it was then (`ReportPages`), read from the session's file, each file once. A file that cannot be
/// read leaves its screenshots as they are.
enum StudyReportPages {
    /// How many bytes of pages the study report carries, at most, as a session report's problems do: each heatmap and
    /// problem frames its page whole. The screenshots after it are shown as images.
    static let maxBytes = 4 * ReportPages.problemBytes

    static func pages(at references: [ScreenshotReference]) -> [ScreenshotReference: ShotPage] {
        var pages: [ScreenshotReference: ShotPage] = [:]
        var bytes = 0
        let bySession = Dictionary(grouping: Set(references.filter { $0.pageTime != nil }), by: \.sessionPath)
        for (path, shots) in bySession.sorted(by: { $0.key < $1.key }) where bytes < maxBytes {
            guard let journal = try? SessionJournal(path: path),
                  let found = try? ReportPages.pages(in: journal, at: shots.map { ($0.pageTime ?? .nan, $0.screen) }) else { continue }
            for (shot, page) in zip(shots, found) {
                guard let page, bytes < maxBytes else { continue }
                bytes += page.html.utf8.count
                pages[shot] = page
            }
        }
        return pages
    }
}
