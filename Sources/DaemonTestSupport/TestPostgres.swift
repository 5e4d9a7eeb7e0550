internal import Foundation

/// A PostgreSQL server of a test's own: `initdb` in a temporary directory, a free port on loopback,
/// trust authentication for the user `mueval`; run as the `postgres` user when the test runs as root
/// (initdb refuses root). `stop()` and `start()` take it down and up again mid-test; `cleanUp()`
/// stops it and removes its directory (call it in a `defer`).
public final class TestPostgres: @unchecked Sendable {
    public let directory: String
    public let port: Int
    private let binaries: String

    /// The URL muevald connects with.
    public var url: String { "postgres://mueval@127.0.0.1:\(port)/postgres" }

    /// Why a PostgreSQL server cannot be started here, or nil.
    public static var unavailableReason: String? {
        binaryDirectory == nil ? "PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/initdb; make test-deps installs postgresql)" : nil
    }

    private static var binaryDirectory: String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        return versions.map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    public init() throws {
        guard let binaries = Self.binaryDirectory else { throw TestPostgresError(message: Self.unavailableReason!) }
        self.binaries = binaries
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-pg-\(UUID().uuidString.prefix(8))").path
        port = try Self.freePort()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 { _ = try runProcess("/bin/chown", ["postgres:postgres", directory]) }
        try run("initdb", ["-D", directory + "/data", "-U", "mueval", "--auth=trust", "--no-sync", "-E", "UTF8"])
        try start()
    }

    /// Starts the server and waits until it accepts connections.
    public func start() throws {
        try run("pg_ctl", ["-D", directory + "/data", "-w", "start", "-l", directory + "/server.log", "-t", "60", "-o",
                           "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off"])
    }

    /// Stops the server (fast shutdown: open connections are ended).
    public func stop() throws {
        try run("pg_ctl", ["-D", directory + "/data", "-w", "stop", "-m", "fast"])
    }

    /// Runs SQL through psql and returns its unaligned output.
    public func query(_ sql: String) throws -> String {
        let result = try runProcess(binaries + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "mueval", "-d", "postgres",
                                                         "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard result.status == 0 else { throw TestPostgresError(message: "psql: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// What the server logged.
    public var log: String { (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "" }

    public func cleanUp() {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A PostgreSQL program, as the `postgres` user when the test runs as root; its output goes to
    /// PROGRAM.log. Through posix_spawn rather than Foundation's `Process`: the server `pg_ctl start`
    /// starts outlives it, and Foundation's child monitor then never notices pg_ctl's exit (see
    /// SpawnedProcess), so every later `waitUntilExit()` in the test process would hang.
    private func run(_ program: String, _ arguments: [String]) throws {
        let output = "\(directory)/\(program).log"
        let command = [binaries + "/" + program] + arguments
        let process = try SpawnedProcess(getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + command : command, log: output)
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { process.stop() }
        guard process.status == 0 else {
            let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw TestPostgresError(message: "\(program) \(arguments.joined(separator: " ")) (status \(process.status.map(String.init) ?? "none")): \(said)\(log)")
        }
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestPostgresError(message: "no free port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct TestPostgresError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
