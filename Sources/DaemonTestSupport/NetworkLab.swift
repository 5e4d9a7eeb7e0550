internal import Foundation

/// Two hosts on one machine for Zeroconf tests: network namespaces "lab" and "device" joined by
/// a veth pair, each with its own D-Bus system bus and its own avahi-daemon restricted to its
/// veth. mDNS never reaches the machine's real network: nothing runs in the root namespace.
///
///     let lab = try NetworkLab.create()
///     defer { lab.cleanUp() }
///     try lab.startAvahi(on: lab.lab)
///
/// `cleanUp()` kills what it started and deletes the namespaces; `create()` also removes
/// namespaces left behind by a test process that died.
public final class NetworkLab: @unchecked Sendable {
    public struct Host: Sendable {
        /// The namespace's name, for `ip netns exec`.
        public let namespace: String
        public let hostName: String
        public let address: String
        public let interface: String
        /// This host's D-Bus system bus, for libdbus clients (avahi-daemon, muevald, muevalctl).
        public let busAddress: String
        let directory: String
    }

    public static let namespacePrefix = "mueval-test-"
    public let lab: Host
    public let device: Host
    private let directory: String
    /// Children: D-Bus, avahi-daemon, helpers.
    private var children: [String: SpawnedProcess] = [:]

    /// Why the lab cannot run here (not root, a tool missing), or nil.
    public static var unavailableReason: String? {
        if getuid() != 0 { return "network namespaces need root" }
        for tool in ["/usr/sbin/avahi-daemon", "/usr/bin/dbus-daemon", "/usr/bin/unshare"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (make test installs it)"
        }
        if (try? run("ip", ["netns", "list"]))?.status != 0 { return "`ip netns` does not work here" }
        return nil
    }

    public static func create() throws -> NetworkLab {
        removeLeftovers()
        return try NetworkLab()
    }

    private init() throws {
        let suffix = String(UUID().uuidString.prefix(6)).lowercased()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-netlab-\(suffix)").path
        // The creator's pid in the names: tests run in several processes at once (`swift test --parallel`), and
        // removeLeftovers leaves the namespaces of a process that is still alive.
        let owner = "\(getpid())-"
        lab = Host(namespace: Self.namespacePrefix + owner + "lab-" + suffix, hostName: "lab-\(suffix)", address: "10.211.0.1",
                   interface: "mvl\(suffix.prefix(6))", busAddress: "unix:path=\(directory)/lab/bus.sock", directory: directory + "/lab")
        device = Host(namespace: Self.namespacePrefix + owner + "dev-" + suffix, hostName: "dev-\(suffix)", address: "10.211.0.2",
                      interface: "mvd\(suffix.prefix(6))", busAddress: "unix:path=\(directory)/dev/bus.sock", directory: directory + "/dev")
        do {
            try setUp()
        } catch {
            cleanUp()
            throw error
        }
    }

    private func setUp() throws {
        for host in [lab, device] {
            try FileManager.default.createDirectory(atPath: host.directory, withIntermediateDirectories: true)
            try Self.must("ip", ["netns", "add", host.namespace])
        }
        try Self.must("ip", ["link", "add", lab.interface, "type", "veth", "peer", "name", device.interface])
        for host in [lab, device] {
            try Self.must("ip", ["link", "set", host.interface, "netns", host.namespace])
            try Self.must("ip", ["-n", host.namespace, "addr", "add", host.address + "/24", "dev", host.interface])
            try Self.must("ip", ["-n", host.namespace, "link", "set", host.interface, "up"])
            try Self.must("ip", ["-n", host.namespace, "link", "set", "lo", "up"])
            try startBus(on: host)
        }
    }

    private func startBus(on host: Host) throws {
        let config = host.directory + "/bus.conf"
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>\(host.busAddress)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_type="method_return"/>
                <allow send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="signal"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
              </policy>
            </busconfig>
            """.write(toFile: config, atomically: true, encoding: .utf8)
        // In the foreground, as our child: a forking dbus-daemon keeps the output pipe open and
        // escapes the cleanup that children get.
        let process = try SpawnedProcess(["ip", "netns", "exec", host.namespace, "dbus-daemon", "--config-file=\(config)", "--nofork", "--nopidfile"])
        children["dbus-\(host.namespace)"] = process
        let socket = host.directory + "/bus.sock"
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) {
            guard process.isRunning, Date() < deadline else {
                throw NetworkLabError.command("dbus-daemon in \(host.namespace)", "no bus socket at \(socket)")
            }
            usleep(20_000)
        }
    }

    /// Starts avahi-daemon on `host` and waits until it runs ("Server startup complete").
    public func startAvahi(on host: Host, timeout: Double = 10) throws {
        let config = host.directory + "/avahi.conf"
        try """
            [server]
            host-name=\(host.hostName)
            use-ipv4=yes
            use-ipv6=no
            allow-interfaces=\(host.interface)
            enable-dbus=yes
            ratelimit-interval-usec=1000000
            ratelimit-burst=1000
            [wide-area]
            enable-wide-area=no
            [publish]
            publish-workstation=no
            publish-hinfo=no
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let log = host.directory + "/avahi.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        try? FileManager.default.createDirectory(atPath: "/run/avahi-daemon", withIntermediateDirectories: true)
        // avahi-daemon insists on /run/avahi-daemon: each one gets a private mount of it.
        let process = try SpawnedProcess(["ip", "netns", "exec", host.namespace, "unshare", "-m", "sh", "-c",
                                          "mount -t tmpfs tmpfs /run/avahi-daemon && exec env DBUS_SYSTEM_BUS_ADDRESS=\(host.busAddress) avahi-daemon -f \(config) --no-chroot --no-drop-root --no-rlimits"],
                                         log: log)
        children["avahi-\(host.namespace)"] = process
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("Server startup complete") { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw NetworkLabError.command("avahi-daemon in \(host.namespace)", (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// Stops avahi-daemon on `host` (and waits until it is gone).
    public func stopAvahi(on host: Host) {
        children.removeValue(forKey: "avahi-\(host.namespace)")?.stop()
    }

    /// Freezes avahi-daemon on `host` (SIGSTOP): it keeps its D-Bus name but answers nothing, as a hung daemon does.
    public func pauseAvahi(on host: Host) throws {
        try signalAvahi(on: host, SIGSTOP)
    }

    /// Lets a paused avahi-daemon go on (SIGCONT).
    public func resumeAvahi(on host: Host) throws {
        try signalAvahi(on: host, SIGCONT)
    }

    private func signalAvahi(on host: Host, _ signal: Int32) throws {
        // `ip netns exec`, `unshare` and `sh -c "… && exec"` exec in turn: the child is avahi-daemon itself.
        guard let process = children["avahi-\(host.namespace)"], process.isRunning else {
            throw NetworkLabError.command("avahi-daemon in \(host.namespace)", "not running")
        }
        kill(process.pid, signal)
    }

    /// Runs a command on `host` with its D-Bus bus; returns its exit status and output.
    public func run(on host: Host, _ command: [String], timeout: Double = 30) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProcess("/usr/bin/env", ["ip", "netns", "exec", host.namespace, "env", "DBUS_SYSTEM_BUS_ADDRESS=\(host.busAddress)"] + command,
                       timeout: timeout)
    }

    /// Takes `host`'s end of the link between the hosts down (a cut cable, a lost Wi-Fi) or up again.
    public func setLink(of host: Host, up: Bool) throws {
        try Self.must("ip", ["-n", host.namespace, "link", "set", host.interface, up ? "up" : "down"])
    }

    /// A prefix that runs a program on `host` (for `TestDaemon.start(launcher:)`).
    public func launcher(on host: Host) -> [String] {
        ["ip", "netns", "exec", host.namespace, "env", "DBUS_SYSTEM_BUS_ADDRESS=\(host.busAddress)"]
    }

    /// Starts a long-running command on `host` that `cleanUp()` kills.
    public func spawn(on host: Host, _ command: [String]) throws {
        let process = try SpawnedProcess(launcher(on: host) + command)
        children["spawned-\(process.pid)"] = process
    }

    /// Kills every process the lab started and deletes the namespaces and files.
    public func cleanUp() {
        children.values.forEach { $0.stop() }
        children = [:]
        for host in [lab, device] { _ = try? Self.run("ip", ["netns", "del", host.namespace]) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Namespaces of test processes that died before cleaning up (their processes die with `ip netns pids`); those of
    /// a live process, another test's running beside this one, stay.
    static func removeLeftovers() {
        guard let list = try? run("ip", ["netns", "list"]) else { return }
        for line in list.stdout.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix(namespacePrefix) else { continue }
            if let owner = Int32(name.dropFirst(namespacePrefix.count).prefix(while: \.isNumber)), isAlive(owner) { continue }
            if let pids = try? run("ip", ["netns", "pids", name]) {
                for pid in pids.stdout.split(separator: "\n").compactMap({ Int32($0) }) { terminate(pid) }
            }
            _ = try? run("ip", ["netns", "del", name])
        }
    }

    /// Stops a process that is not our child: SIGTERM, then SIGKILL if it is still alive after 2 s.
    private static func terminate(_ pid: Int32) {
        kill(pid, SIGTERM)
        for _ in 0..<100 where isAlive(pid) { usleep(20_000) }
        if isAlive(pid) { kill(pid, SIGKILL) }
    }

    /// Alive and not a zombie (a container's init may never reap it).
    private static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    private static func run(_ command: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProcess("/usr/bin/env", [command] + arguments)
    }

    private static func must(_ command: String, _ arguments: [String]) throws {
        let result = try run(command, arguments)
        guard result.status == 0 else { throw NetworkLabError.command(([command] + arguments).joined(separator: " "), result.stderr) }
    }
}

public enum NetworkLabError: Error, CustomStringConvertible {
    case command(String, String)

    public var description: String {
        switch self {
        case .command(let command, let output): "\(command) failed: \(output)"
        }
    }
}
