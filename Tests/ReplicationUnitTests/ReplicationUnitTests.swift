import Foundation
@testable import Replication
@testable import ReplicationArchive
import Testing

/// The replicator's parts that need no PostgreSQL: settings, the doorbell, the deadline
/// (the whole chain runs against a real server in IntegrationTests/ReplicationTests).
struct ReplicationUnitTests {
    @Test func urlsGiveTheirPartsAndNeverTheirPassword() throws {
        let target = try PostgresTarget(url: "postgres://lab:s%40cret@db.example.org:6543/studies?sslmode=verify-full", passwordFile: nil)
        #expect(target.host == "db.example.org")
        #expect(target.port == 6543)
        #expect(target.user == "lab")
        #expect(target.password == "s@cret")
        #expect(target.database == "studies")
        #expect(target.sslMode == "verify-full")
        #expect(target.description == "db.example.org:6543/studies")

        let plain = try PostgresTarget(url: "postgresql://mueval@127.0.0.1", passwordFile: nil)
        #expect(plain.port == 5432)
        #expect(plain.database == "mueval", "the user's name, as libpq does")
        #expect(plain.sslMode == "disable")
    }

    @Test func aPasswordFileGivesThePassword() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pw-\(UUID().uuidString)").path
        try "from the file\nsecond line\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        #expect(try PostgresTarget(url: "postgres://u:inurl@h/d", passwordFile: file).password == "from the file")
        #expect(throws: ReplicationError.self) { try PostgresTarget(url: "postgres://u@h/d", passwordFile: file + ".missing") }
        // Readable by others: refused, saying what to change, as PostgreSQL ignores such a ~/.pgpass.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        let refused = #expect(throws: ReplicationError.self) { try PostgresTarget(url: "postgres://u@h/d", passwordFile: file) }
        #expect(refused?.description.contains("may be read or changed by anyone (mode 0644): chmod 600 it") == true)
        #expect(throws: ReplicationError.self) { try ReplicationSettings(url: "postgres://u@h/d", passwordFile: file).checkPasswordFile() }
    }

    /// The rule apart from the file system: the owner (this process's user, or root with a group that reads).
    @Test(arguments: [
        (S_IFREG, 0o600 as mode_t, 1000 as uid_t, nil as String?),
        (S_IFREG, 0o400, 1000, nil),
        (S_IFREG, 0o640, 0, nil),
        (S_IFREG, 0o640, 1000, "may be read or changed by its group (mode 0640)"),
        (S_IFREG, 0o604, 1000, "may be read or changed by anyone (mode 0604)"),
        (S_IFREG, 0o660, 0, "may be changed by its group (mode 0660)"),
        (S_IFREG, 0o600, 1001, "is owned by uid 1001, neither this process's user (uid 1000) nor root"),
        (S_IFDIR, 0o700, 1000, "is not a regular file"),
    ])
    func aSecretFileIsItsOwnersAlone(type: mode_t, mode: mode_t, owner: uid_t, problem: String?) {
        let found = SecretFile.problem(type: type, mode: mode, owner: owner, reader: 1000)
        if let problem {
            #expect(found?.hasPrefix(problem) == true, "\(found ?? "nil")")
        } else {
            #expect(found == nil)
        }
    }

    @Test(arguments: ["mysql://u@h/d", "postgres://h/d", "postgres:///d", "postgres://u@h/d?sslmode=allow", "not a url"])
    func badURLsAreRefusedWithWhatToWrite(url: String) {
        #expect(throws: ReplicationError.self) { try PostgresTarget(url: url, passwordFile: nil) }
    }

    @Test func aRingBeforeTheWaitEndsItAtOnceAndRingsDoNotAddUp() async {
        let doorbell = Doorbell()
        doorbell.ring()
        doorbell.ring()
        // Which of ring and time ended each wait, not how long it took: a busy test pool may start the
        // waits' tasks late, but a ring already there still ends the first one.
        #expect(await doorbell.wait(upTo: 30), "the ring came before the wait")
        #expect(await !doorbell.wait(upTo: 0.2), "two rings count as one")
    }

    @Test func aRingWakesAWaiter() async {
        let doorbell = Doorbell()
        let waiter = Task { await doorbell.wait(upTo: 60) }
        // Rings until the waiter is woken (a ring before it waits counts too).
        let ringer = Task {
            while !Task.isCancelled {
                doorbell.ring()
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(await waiter.value, "a ring, not the 60 s, ended the wait")
        ringer.cancel()
    }

    @Test func aDeadlineGivesUpOnWhatNeverEndsAndExpiresIt() async {
        let expired = Expired()
        await #expect(throws: ReplicationError.self) {
            try await Deadline.run(seconds: 0.1, expire: { await expired.set() }) {
                try await Task.sleep(for: .seconds(3600))
            }
        }
        #expect(await expired.value)
        let value = try? await Deadline.run(seconds: 30, expire: {}) { 42 }
        #expect(value == 42)
    }
}

private actor Expired {
    var value = false
    func set() { value = true }
}
