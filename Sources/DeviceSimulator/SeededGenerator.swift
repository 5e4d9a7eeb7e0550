internal import Foundation

/// SplitMix64: a small, fast generator whose whole output follows from its seed, so that a run with
/// `--seed` produces the same bytes on every machine (the standard library's generator is not seedable).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent stream for one part of a run (a device, its sensors), so that adding a device or a
    /// sensor sample does not shift the numbers every other part sees.
    public func derived(_ stream: UInt64) -> SeededGenerator {
        var copy = SeededGenerator(seed: state ^ (stream &* 0xD6E8_FEB8_6659_FD93))
        _ = copy.next()
        return copy
    }

    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        Double.random(in: range, using: &self)
    }

    /// True with probability `p` (0…1); draws nothing when `p` is 0, so that an option left at 0 changes no other choice.
    mutating func chance(_ p: Double) -> Bool {
        p > 0 && Double.random(in: 0..<1, using: &self) < p
    }

    /// Normally distributed noise (Box–Muller), for sensor readings.
    mutating func gaussian(sigma: Double) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne...1, using: &self)
        let u2 = Double.random(in: 0...1, using: &self)
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

