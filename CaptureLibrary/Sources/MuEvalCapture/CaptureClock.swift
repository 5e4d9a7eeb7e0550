#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Time stamps from the wall clock, ordered by a monotonic one: read once at `startCapture`, the wall
/// clock then advances with the monotonic clock, so that a clock change on the phone mid-session
/// neither reorders nor stretches it.
public struct CaptureClock: Sendable, Equatable {
    private let wallAtStart: Double
    private let monotonicAtStart: Double

    public init(wall: Double, monotonic: Double) {
        wallAtStart = wall
        monotonicAtStart = monotonic
    }

    /// Seconds since 1970 now.
    public func now() -> Double {
        timestamp(monotonic: Self.monotonicNow())
    }

    /// Seconds since 1970 at the monotonic time `monotonic`.
    public func timestamp(monotonic: Double) -> Double {
        wallAtStart + (monotonic - monotonicAtStart)
    }

    /// Seconds on a clock that never jumps (it goes on while the device sleeps).
    public static func monotonicNow() -> Double {
        let elapsed = ContinuousClock.now - reference
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static let reference = ContinuousClock.now

    public static func wallNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
