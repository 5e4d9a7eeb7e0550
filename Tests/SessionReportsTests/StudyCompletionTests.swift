import Foundation
import SessionCore
import SessionModel
@testable import SessionReports
import Testing

/// When a recruited study completes, and the lab's command it runs then.
@Suite struct StudyCompletionTests {
    @Test func theCommandGetsWhatCompletedInItsEnvironment() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-hook-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let completion = StudyCompletionEvent(study: "momentree", reason: .deadline, report: "/data/reports/studies/momentree/index.html",
                                              done: 3, target: 8)
        let outcome = await CompletionCommand(command: "env | grep ^MUEVAL_ | sort > '\(file)'; exit 3", timeout: 20)
            .run(environment: CompletionCommand.environment(completion))
        #expect(outcome == .exited(3))
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written.contains("MUEVAL_STUDY=momentree\n"))
        #expect(written.contains("MUEVAL_REASON=deadline\n"))
        #expect(written.contains("MUEVAL_REPORT=/data/reports/studies/momentree/index.html\n"))
        #expect(written.contains("MUEVAL_DONE=3\n"))
        #expect(written.contains("MUEVAL_TARGET=8\n"))
    }

    @Test func aCommandThatOverrunsIsKilledWithWhatItStarted() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-hook-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let started = ContinuousClock.now
        // The shell's child ignores SIGTERM: only the process group's SIGKILL ends it.
        let outcome = await CompletionCommand(command: "(trap '' TERM; exec sleep 900) & echo $! > '\(file)'; wait", timeout: 0.5)
            .run(environment: [:])
        #expect(outcome == .killed(after: 0.5))
        // Unkilled, the child's sleep would hold the command for 15 minutes and still be there below; the
        // bound is far above anything a loaded machine adds (the whole suite in parallel took 26 s once).
        #expect(ContinuousClock.now - started < .seconds(300))
        let child = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // Gone, or a zombie waiting for init: not sleeping on.
        func alive() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8) else { return false }
            return !stat.contains(") Z ")
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while alive(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!alive(), "the command's child \(child) outlived the kill")
    }

    @Test func whatTheCommandLeavesInTheBackgroundDiesWhenItExits() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-hook-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let outcome = await CompletionCommand(command: "sleep 1000 & echo $! > '\(file)'; exit 4", timeout: 300).run(environment: [:])
        #expect(outcome == .exited(4), "the command's own status, though its group was killed after")
        let child = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        func alive() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8) else { return false }
            return !stat.contains(") Z ")
        }
        #expect(try await eventually(10) { !alive() }, "the background sleep \(child) outlived the command")
    }

    @Test func theCommandGetsNothingOfMuevaldsEnvironmentAndRunsInTheRoot() async throws {
        let inherited = ["MUEVAL_SERVER_DEVICE_TOKEN": "token", "MUEVAL_STORAGE_POSTGRES_URL": "postgres://lab:pw@db/mueval",
                         "HOME": "/var/lib/mueval", "LANG": "de_DE.UTF-8", "PATH": "/home/lab/bin:/usr/bin"]
        #expect(CompletionCommand.minimalEnvironment(["MUEVAL_STUDY": "s"], inherited: inherited)
                == ["MUEVAL_STUDY": "s", "LANG": "de_DE.UTF-8", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
        #expect(CompletionCommand.minimalEnvironment([:], inherited: [:])["LANG"] == "C.UTF-8")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-hook-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(await CompletionCommand(command: "pwd > '\(file)'", timeout: 300).run(environment: [:]) == .exited(0))
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "/\n")
        // A relative data directory's report is named absolutely: the command does not run where muevald does.
        let relative = StudyCompletionEvent(study: "s", reason: .target, report: "data/reports/studies/s/index.html", done: 1, target: 1)
        #expect(CompletionCommand.environment(relative)["MUEVAL_REPORT"] == FileManager.default.currentDirectoryPath + "/data/reports/studies/s/index.html")
    }

    @Test func looksAgainWhenAStudySessionStopsOrARecruitmentChanges() {
        var record = SessionRecord(id: 1, uuid: "u", name: "s", sensors: [], state: .stopped, created: 0, path: "/s.sqlite", events: 0)
        #expect(!StudyCompletionService.mayChangeRecruitment(.stopped(record)), "a session of no study")
        record.study = "s"
        #expect(StudyCompletionService.mayChangeRecruitment(.stopped(record)))
        #expect(!StudyCompletionService.mayChangeRecruitment(.started(record)))
        #expect(StudyCompletionService.mayChangeRecruitment(.recruitmentChanged(study: "s")))
        #expect(StudyCompletionService.mayChangeRecruitment(.missed(3)))
        #expect(!StudyCompletionService.mayChangeRecruitment(.studyCompleted(study: "s", reason: .target, report: "")))
    }
}
