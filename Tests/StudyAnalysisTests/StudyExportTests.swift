import SessionModel
import StudyAnalysis
import Testing

/// The CSV export: RFC 4180, the documented header, one row per participant × task × iteration.
@Suite struct StudyExportTests {
    typealias F = StudyFixture

    /// RFC 4180 read back independently of the writer: quoted fields, doubled quotes, CRLF lines.
    static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = ""
        var quoted = false, index = 0
        let characters = Array(text.unicodeScalars)
        while index < characters.count {
            let c = characters[index]
            if quoted {
                if c == "\"" {
                    if index + 1 < characters.count, characters[index + 1] == "\"" { field.unicodeScalars.append("\""); index += 1 } else { quoted = false }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                row.append(field); field = ""
            } else if c == "\r", index + 1 < characters.count, characters[index + 1] == "\n" {
                row.append(field); rows.append(row); row = []; field = ""; index += 1
            } else {
                field.unicodeScalars.append(c)
            }
            index += 1
        }
        return rows
    }

    @Test func theCSVHasTheDocumentedHeaderAndARowPerParticipantTaskAndIteration() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let results = try await StudyAnalyzer.analyze(try await fixture.write())
        let text = StudyExport.csv(results)
        #expect(text.contains("\"Publish, post\""))
        let rows = Self.parse(text)
        #expect(rows.first == StudyExport.columns)
        #expect(StudyExport.columns.joined(separator: ",") == """
            study,iteration,iteration_label,participant,attributes,task,session,runs,outcome,derived_outcome,overridden,reason,\
            time_s,seq,misclicks,unresponsive_taps,extra_views,backtracks,views,problems,sus,completion_rate,completion_low,\
            completion_high,time_geomean_s,time_low,time_high,seq_mean,quotes,exclamations,marked_by
            """)
        #expect(rows.dropFirst().allSatisfy { $0.count == StudyExport.columns.count })
        #expect(rows.count == 17)   // the header, then four tasks for P1, P2 (iteration 1) and P3, P4 (iteration 2)

        func row(_ iteration: String, _ participant: String, _ task: String) throws -> [String: String] {
            let found = try #require(rows.first { $0[1] == iteration && $0[3] == participant && $0[5] == task })
            return Dictionary(uniqueKeysWithValues: zip(StudyExport.columns, found))
        }
        let publish = try row("1", "P1", F.publish)
        #expect(publish["study"] == "momentree" && publish["iteration_label"] == "alpha")
        #expect(publish["attributes"] == "age=30s;experience=novice")
        #expect(publish["session"] == "1" && publish["runs"] == "1" && publish["outcome"] == "success")
        #expect(publish["overridden"] == "false" && publish["time_s"] == "34" && publish["seq"] == "6")
        #expect(publish["misclicks"] == "1" && publish["unresponsive_taps"] == "2" && publish["extra_views"] == "2")
        #expect(publish["views"] == "ComposeView>SettingsView>ComposeView>FeedView")
        #expect(publish["problems"]?.split(separator: ";").count == 2)
        #expect(publish["sus"] == "100" && publish["completion_rate"] == "0.5" && publish["time_geomean_s"] == "34")
        #expect(publish["time_low"] == "" && publish["seq_mean"] == "4.5")
        #expect(try Double(#require(publish["completion_low"])) != nil)
        #expect(publish["quotes"] == "where is the send button" && publish["exclamations"] == "")
        #expect(publish["marked_by"] == "app;observer")

        let assisted = try row("1", "P1", F.invite)
        #expect(assisted["outcome"] == "assisted" && assisted["derived_outcome"] == "failure" && assisted["overridden"] == "true")
        #expect(assisted["time_s"] == "15")
        let notAttempted = try row("1", "P2", F.invite)
        #expect(notAttempted["outcome"] == StudyExport.notAttempted && notAttempted["session"] == "")
        #expect(notAttempted["misclicks"] == "" && notAttempted["time_s"] == "" && notAttempted["seq"] == "2")
        #expect(notAttempted["sus"] == "75" && notAttempted["runs"] == "0" && notAttempted["quotes"] == "")
        #expect(notAttempted["marked_by"] == "")
        #expect(try row("2", "P4", F.publish)["sus"] == "87.5")
    }
}
