import Glibc

/// Tests/Load/web_phones.py's options, with its names and defaults, so that Benchmarks/phones_at_once.py
/// passes either client the same arguments.
struct Options {
    /// A group of phones: how many, over how many loopback addresses, from which one.
    struct Room {
        var phones: Int
        var addresses: Int
        var first: String
    }

    var host = "127.0.0.1"
    var port = 0
    var origin: String?
    var rooms: [Room] = []
    var rate = 20.0
    var seconds = 20.0
    var ramp = 2.0
    var drop = "mixed"
    var drainTimeout = 60.0
    var seed = 52
    var firstSeq: Int64 = 1
    var devicePrefix = "web-phone"
    var appId = "load.webphones"
    var progress = 0.0
    var output = "-"
    /// CLOCK_MONOTONIC seconds at which the run's clock starts (web_phones.py's `Run.start`); nil: half a
    /// second from now, as there. phones_at_once.py passes its own mark, so that its sampling window holds.
    var startAt: Double?
    /// Seconds: the phones' batch and poll timers are gathered into slots this wide (Timers; not in web_phones.py,
    /// where each timer is its own wake-up); 0: each at its exact moment.
    var timerSlot = 0.005

    // Bounds of a run (house rule: load is bounded in count and time), as in web_phones.py.
    static let maxPhones = 2000, maxRate = 200.0, maxSeconds = 1800.0, maxDrain = 600.0
    static let drops = ["close", "reset", "silent", "mixed", "none"]

    static let usage = """
        usage: webphones --port PORT [--host H] [--origin O] [--phones N] [--addresses K] [--first-address A]
               [--room PHONES:ADDRESSES:FIRST]... [--rate R] [--seconds S] [--ramp S] [--drop close|reset|silent|mixed|none]
               [--drain-timeout S] [--seed N] [--first-seq N] [--device-prefix P] [--app-id ID] [--progress S]
               [--output FILE|-] [--start-at MONOTONIC_SECONDS] [--timer-slot-ms MS (5)]
        """

    /// The options of `arguments` (without the program's name); exits with the usage on a mistake.
    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var phones = 40, addresses = 8, firstAddress = "127.0.0.1", roomSpecs: [String] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            // argparse takes `--name value` and `--name=value`.
            let (name, inline) = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init).pair
            func value() -> String {
                if let inline { return inline }
                guard let next = rest.popFirst() else { fail("\(name) needs a value") }
                return next
            }
            func number<T: LosslessStringConvertible>(_: T.Type) -> T {
                let text = value()
                guard let parsed = T(text) else { fail("\(name): not a number: \(text)") }
                return parsed
            }
            switch name {
            case "--host": options.host = value()
            case "--port": options.port = number(Int.self)
            case "--origin": options.origin = value()
            case "--phones": phones = number(Int.self)
            case "--addresses": addresses = number(Int.self)
            case "--first-address": firstAddress = value()
            case "--room": roomSpecs.append(value())
            case "--rate": options.rate = number(Double.self)
            case "--seconds": options.seconds = number(Double.self)
            case "--ramp": options.ramp = number(Double.self)
            case "--drop":
                options.drop = value()
                guard drops.contains(options.drop) else { fail("--drop: one of \(drops.joined(separator: ", "))") }
            case "--drain-timeout": options.drainTimeout = number(Double.self)
            case "--seed": options.seed = number(Int.self)
            case "--first-seq": options.firstSeq = number(Int64.self)
            case "--device-prefix": options.devicePrefix = value()
            case "--app-id": options.appId = value()
            case "--progress": options.progress = number(Double.self)
            case "--output": options.output = value()
            case "--start-at": options.startAt = number(Double.self)
            case "--timer-slot-ms":
                options.timerSlot = number(Double.self) / 1000
                guard (0...Delivery.batch).contains(options.timerSlot) else { fail("--timer-slot-ms: 0 to 100") }
            case "-h", "--help":
                print(usage)
                exit(0)
            default: fail("unknown option \(argument)")
            }
        }
        guard options.port > 0 else { fail("--port is required") }
        let specs = roomSpecs.isEmpty ? ["\(phones):\(addresses):\(firstAddress)"] : roomSpecs
        options.rooms = specs.map { spec in
            let parts = spec.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let count = Int(parts[0]), let spread = Int(parts[1]) else {
                fail("--room: PHONES:ADDRESSES:FIRST, not \(spec)")
            }
            return Room(phones: count, addresses: max(1, spread), first: parts[2])
        }
        options.check()
        return options
    }

    /// The house rules for load: loopback only, bounded (web_phones.py's `check`).
    func check() {
        var addresses = [host]
        for room in rooms {
            guard let first = IPv4(room.first) else { Self.fail("not an IPv4 address: \(room.first)") }
            addresses.append(first.advanced(by: room.addresses - 1).description)
        }
        guard addresses.allSatisfy({ IPv4($0)?.isLoopback == true }) else {
            Self.fail("loopback (127.0.0.0/8) only, not \(addresses)")
        }
        let count = rooms.reduce(0) { $0 + $1.phones }
        guard count <= Self.maxPhones, rate > 0, rate <= Self.maxRate, seconds > 0, seconds <= Self.maxSeconds,
              drainTimeout >= 0, drainTimeout <= Self.maxDrain else {
            Self.fail("at most \(Self.maxPhones) phones, \(Int(Self.maxRate)) events/s, \(Int(Self.maxSeconds)) s, "
                      + "a drain of \(Int(Self.maxDrain)) s")
        }
    }

    /// The Origin header: the console's own origin unless given.
    var originHeader: String { origin ?? "http://\(host):\(port)" }

    static func fail(_ message: String) -> Never {
        printError("webphones: \(message)\n\(usage)")
        exit(2)
    }
}

/// A line on stderr (Glibc's `stderr` is a C global, which Swift 6 will not read from any thread).
func printError(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// An IPv4 address as a number, for spreading phones over consecutive loopback addresses.
struct IPv4: CustomStringConvertible {
    var value: UInt32

    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard parts.count == 4 else { return nil }
        value = parts.reduce(0) { $0 << 8 | UInt32($1) }
    }

    private init(value: UInt32) { self.value = value }

    func advanced(by offset: Int) -> IPv4 { IPv4(value: value &+ UInt32(truncatingIfNeeded: offset)) }
    var isLoopback: Bool { value >> 24 == 127 }
    var description: String { "\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)" }
}

private extension Array where Element == String {
    /// `--name=value` as (name, value); `--name` as (name, nil).
    var pair: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}
