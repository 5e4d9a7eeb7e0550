import Glibc
import NIOCore

/// CLOCK_MONOTONIC, the clock of Python's time.monotonic() and of NIO's deadlines: phones_at_once.py's marks
/// and this process's mean the same instants.
enum Clock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Seconds since 1970 (time.time()): an event's timestamp.
    static func wall() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func deadline(_ seconds: Double) -> NIODeadline {
        .uptimeNanoseconds(UInt64(max(0, seconds) * 1e9))
    }

    /// User and system CPU seconds of this process, all its threads.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ value: timeval) -> Double { Double(value.tv_sec) + Double(value.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// What all phones share (web_phones.py's `Run`): the clock's marks, the event encoder, the loop they run on;
/// and the run itself: start every phone, wait until each is done or the deadline is well past, summarise.
final class Run {
    let options: Options
    let endpoint: Endpoint
    let loop: any EventLoop
    let start: Double
    let deadline: Double
    var events: TouchEvents
    private var timers: Timers
    private var drivers: [PhoneDriver] = []
    private var remaining = 0
    private let done: EventLoopPromise<Void>

    init(options: Options, loop: any EventLoop) {
        self.options = options
        self.loop = loop
        endpoint = Endpoint(host: options.host, port: options.port, origin: options.originHeader)
        start = options.startAt.map { max($0, Clock.now()) } ?? Clock.now() + 0.5
        let sendEnd = start + options.ramp + options.seconds  // the last phone's sending ends here
        deadline = sendEnd + options.drainTimeout              // everything stops by here
        events = TouchEvents(firstSeq: options.firstSeq)
        timers = Timers(slotSeconds: options.timerSlot)
        done = loop.makePromise()
    }

    /// Sets a phone's timer for `time`, in its slot (Timers): a NIO task for the slot when it is the slot's first.
    func setTimer(_ timer: PhoneTimer, for driver: PhoneDriver, at time: Double) {
        guard let slot = timers.add(timer, for: driver, at: time) else { return }
        loop.assumeIsolated().scheduleTask(deadline: timers.deadline(of: slot)) { self.fire(slot) }
    }

    private func fire(_ slot: Int64) {
        for (driver, timer) in timers.take(slot) { driver.fired(timer) }
        timers.fired()
    }

    /// Runs the phones to the end; the summary's JSON text, and whether every event was acknowledged.
    func play() -> EventLoopFuture<(String, Bool)> {
        var rng = PythonRandom(seed: options.seed)
        for (room, spec) in options.rooms.enumerated() {
            let base = IPv4(spec.first)!
            for index in 0..<spec.phones {
                let phone = Phone(options: options, room: room, index: index,
                                  address: base.advanced(by: index % spec.addresses).description,
                                  rng: PythonRandom(seed: rng.random()), start: start)
                drivers.append(PhoneDriver(phone: phone, run: self))
            }
        }
        let cpu = Clock.cpuSeconds()
        remaining = drivers.count
        if remaining == 0 { done.succeed() }
        drivers.forEach { $0.start() }
        let isolated = loop.assumeIsolated()
        // The whole run is bounded: a phone that could not finish by the deadline is cut off and counted as such.
        let cutOff = isolated.scheduleTask(deadline: Clock.deadline(deadline + 30)) { self.done.succeed() }
        var progress: RepeatedTask?
        if options.progress > 0 {
            let every = TimeAmount.nanoseconds(Int64(options.progress * 1e9))
            progress = loop.scheduleRepeatedTask(initialDelay: every, delay: every) { [bound = NIOLoopBound(self, eventLoop: loop)] _ in
                bound.value.report()
            }
        }
        return done.futureResult.assumeIsolated().map { (_: Void) -> (String, Bool) in
            cutOff.cancel()
            progress?.cancel()
            let summary = Summary(options: self.options, phones: self.drivers.map(\.phone),
                                  cpuSeconds: Clock.cpuSeconds() - cpu, wallSeconds: Clock.now() - self.start)
            var text = ""
            summary.json.write(into: &text)
            let unacked = summary.phones.reduce(0) { $0 + $1.made - $1.acked - $1.refused }
            return (text, unacked == 0)
        }.nonisolated()
    }

    func phoneFinished() {
        remaining -= 1
        if remaining == 0 { done.succeed() }
    }

    /// A line on stderr every `--progress` s: a long run says how it goes.
    private func report() {
        let phones = drivers.map(\.phone)
        let line = "web_phones: " + pad(Int((Clock.now() - start).rounded()), 6) + " s  connected "
            + pad(drivers.filter(\.isWelcomed).count, 4) + "  made " + pad(phones.reduce(0) { $0 + $1.made }, 9)
            + "  acked " + pad(phones.reduce(0) { $0 + $1.acked }, 9)
            + "  refusals \(phones.reduce(0) { $0 + $1.refusals })  failures \(phones.reduce(0) { $0 + $1.failures })"
        printError(line)
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
