internal import Foundation

/// Where muevald keeps the reports it writes under its data directory, and where the console serves each:
/// one vocabulary for the daemon's report services and the console, which serves the folders as they are
/// and does not link those services.
package struct ReportLocations: Sendable, Equatable {
    /// The name of the report written when a session stops (every section): the replay's problem marks come from it.
    package static let defaultName = "default"

    /// `DATA/reports`.
    package let root: String

    package init(dataDirectory: String) {
        root = dataDirectory + "/reports"
    }

    /// A saved configuration's name as one safe path component.
    package static func directoryName(_ name: String) -> String {
        String(name.unicodeScalars.map { scalar -> Character in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || scalar == "-" || scalar == "_" ? Character(scalar) : "_"
        })
    }

    // MARK: Sessions

    /// A session's reports, and the console's replay index beside them: `DATA/reports/ID`. It goes with the session.
    package func session(_ session: Int64) -> String { "\(root)/\(session)" }

    /// One report of a session: `DATA/reports/ID/NAME`.
    package func session(_ session: Int64, report name: String) -> String { "\(root)/\(session)/\(name)" }

    /// Where the console serves it.
    package static func url(session: Int64, report name: String) -> String { "/sessions/\(session)/reports/\(name)/index.html" }

    // MARK: Studies

    /// The folder of the studies' reports: `DATA/reports/studies`.
    package var studies: String { root + "/studies" }

    /// A study's report of every iteration (`DATA/reports/studies/NAME`, whoever asked for it: the console, the
    /// study's completion), or of one (`iteration-N` inside it). A study's name is one safe path component
    /// (`StudyError.checkName`).
    package func study(_ study: String, iteration: Int? = nil) -> String {
        "\(studies)/\(study)" + (iteration.map { "/\(Self.iterationPrefix)\($0)" } ?? "")
    }

    /// Where the console serves it: `/studies/NAME/report/[iteration-N/]index.html`.
    package static func url(study: String, iteration: Int? = nil) -> String {
        "/studies/\(study)/report/" + (iteration.map { "\(Self.iterationPrefix)\($0)/" } ?? "") + "index.html"
    }

    /// One iteration's report is the folder `iteration-N` inside the study's.
    package static let iterationPrefix = "iteration-"
}
