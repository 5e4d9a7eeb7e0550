internal import ArgumentParser
internal import ControlProtocol
internal import Foundation
internal import MuEvalWire
internal import SessionModel
internal import ZeroconfBrowsing
#if canImport(Glibc)
internal import Glibc
#endif

// The commands about the daemon itself: status, top, console, discover.

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The daemon, its open sessions and its counters.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: [.short, .long], help: "Refresh every second, with event rates (like `top`).") var watch = false

    func run() async throws {
        guard watch else {
            return try await global.call(ControlRequest.Status(), human: ControlOutput.status)
        }
        try await StatusWatch(global: global).run()
    }
}

struct Top: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sessions, devices and event rates, refreshed every second (status --watch).")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await StatusWatch(global: global).run()
    }
}

/// `status --watch`: the status every second, with rates computed from the counters' growth.
struct StatusWatch {
    let global: GlobalOptions

    func run() async throws {
        Interrupt.exitCleanlyOnCtrlC()
        Output.endWhenReaderGoesAway()
        let clearScreen = isatty(STDOUT_FILENO) == 1 && !global.json
        var previous: (report: StatusReport, at: Date)?
        while true {
            let report = try await global.client.call(ControlRequest.Status())
            let now = Date()
            if global.json {
                try Output.standardOutput.write(ControlOutput.json(report).replacingOccurrences(of: "\n", with: "") + "\n")
            } else {
                let text = ControlOutput.watch(report, previous: previous.map { ($0.report, now.timeIntervalSince($0.at)) })
                try Output.standardOutput.write((clearScreen ? "\u{1B}[H\u{1B}[2J" : "\n") + text)
            }
            previous = (report, now)
            try await Task.sleep(for: .seconds(1))
        }
    }
}

struct Console: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a single-use login link to muevald's web console (the Mobile Monitor).",
        discussion: """
            The link works once, within a few minutes (console.login_code_seconds). Whoever may use the control \
            socket may use the console. From a laptop: `ssh -L 28080:127.0.0.1:28080 LAB muevalctl console`, then \
            open the link on the laptop (docs/CONSOLE.md).
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Open the link in the desktop's browser (xdg-open).") var open = false

    func run() async throws {
        let link = try await global.client.call(ControlRequest.ConsoleLogin())
        try global.show(link) { "\($0.url)\n" }
        if open { try Browser.open(link.url) }
    }
}

struct Discover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the capture servers announced on the network (the first thing to check when a device does not connect).")
    @Option(help: "Seconds to browse.") var timeout: Double = 3
    @Option(help: "The service type to browse for.") var type = CaptureService.type
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let services = try await ZeroconfBrowser.browse(type: type, timeout: timeout)
        try global.show(services) { services in
            guard !services.isEmpty else {
                return "no capture server announced within \(timeout) s (is avahi-daemon running on both hosts, and muevald without --no-zeroconf?)\n"
            }
            var table = TextTable(["NAME", "HOST", "ADDRESSES", "PORT", "TXT"])
            for service in services {
                table.add([service.name, service.host, service.addresses.joined(separator: ","), String(service.port),
                           service.txt.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")])
            }
            return table.render()
        }
    }
}
