internal import Foundation

// The quantiles are written here because no package this project may use (the locally mirrored ones) provides
// them, and Foundation has only the C library's erfc and lgamma.

/// The standard normal distribution.
public enum Normal {
    /// The standard normal quantile (inverse CDF) Φ⁻¹(p): Acklam's rational approximation (relative error 1.15e-9),
    /// refined by one Halley step on erfc to about machine precision. −∞ for p ≤ 0, +∞ for p ≥ 1, NaN for NaN.
    ///
    /// P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution function" (2003).
    public static func quantile(_ p: Double) -> Double {
        guard !p.isNaN else { return .nan }
        if p <= 0 { return -.infinity }
        if p >= 1 { return .infinity }
        let a = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
        let b = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                 6.680131188771972e+01, -1.328068155288572e+01]
        let c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                 -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
        let low = 0.02425
        var x: Double
        if p < low {
            let q = (-2 * log(p)).squareRoot()
            x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        } else if p <= 1 - low {
            let q = p - 0.5
            let r = q * q
            x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
        } else {
            let q = (-2 * log(1 - p)).squareRoot()
            x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        // Halley refinement: e = Φ(x) − p, with Φ from erfc, which keeps its precision in both tails.
        let e = 0.5 * erfc(-x / 2.0.squareRoot()) - p
        let u = e * (2 * Double.pi).squareRoot() * exp(x * x / 2)
        x -= u / (1 + x * u / 2)
        return x
    }
}

/// Student's t distribution, for any real degrees of freedom > 0 (Welch–Satterthwaite gives non-integer ones).
public enum StudentT {
    /// The quantile t(p; ν): the t with P(T ≤ t) = p. Solved by safeguarded Newton iteration on the upper tail
    /// P(T > t) = ½·I_{ν/(ν+t²)}(ν/2, ½) (regularized incomplete beta; Abramowitz & Stegun 26.7.1, 26.5),
    /// to about 1e-12 relative. ±∞ for p at 0 or 1, NaN for NaN or ν ≤ 0; the normal quantile for ν = ∞.
    public static func quantile(_ p: Double, degreesOfFreedom nu: Double) -> Double {
        guard !p.isNaN, !nu.isNaN, nu > 0 else { return .nan }
        if p <= 0 { return -.infinity }
        if p >= 1 { return .infinity }
        if p == 0.5 { return 0 }
        if nu.isInfinite { return Normal.quantile(p) }
        let tail = min(p, 1 - p)
        let t = upperQuantile(tail: tail, nu: nu)
        return p > 0.5 ? t : -t
    }

    /// The t ≥ 0 with P(T > t) = tail (0 < tail < ½).
    private static func upperQuantile(tail: Double, nu: Double) -> Double {
        // Bracket: the upper tail decreases from ½ at t = 0; grow `high` until it is below `tail`.
        var low = 0.0
        var high = max(1, -Normal.quantile(tail))
        while upperTail(high, nu: nu) > tail {
            low = high
            high *= 2
            if high.isInfinite { return high }
        }
        // Newton from the bracket's end, falling back to bisection whenever a step leaves the bracket.
        var t = high
        let logDensityConstant = lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * log(nu * Double.pi)
        for _ in 0..<200 {
            let f = upperTail(t, nu: nu) - tail
            if f > 0 { low = t } else { high = t }
            let density = exp(logDensityConstant - (nu + 1) / 2 * log1p(t * t / nu))
            var next = t + f / density
            if !(next > low && next < high) { next = (low + high) / 2 }
            if abs(next - t) <= 1e-14 * max(1, t) || high - low <= 1e-15 * max(1, high) {
                return next
            }
            t = next
        }
        return t
    }

    /// P(T > t) for t ≥ 0. With x = ν/(ν+t²), 1 − x is passed exactly (t²/(ν+t²)) so that small t keep precision.
    static func upperTail(_ t: Double, nu: Double) -> Double {
        let x = nu / (nu + t * t)
        let oneMinusX = t * t / (nu + t * t)
        return 0.5 * RegularizedBeta.value(a: nu / 2, b: 0.5, x: x, oneMinusX: oneMinusX)
    }
}

/// The regularized incomplete beta function I_x(a, b).
enum RegularizedBeta {
    /// I_x(a, b) by its continued fraction (Numerical Recipes, 3rd ed., §6.4, `betai`/`betacf`, modified Lentz),
    /// using the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges faster.
    static func value(a: Double, b: Double, x: Double, oneMinusX: Double) -> Double {
        if x <= 0 { return 0 }
        if oneMinusX <= 0 { return 1 }
        let logFront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(oneMinusX)
        let front = exp(logFront)
        if x < (a + 1) / (a + b + 2) {
            return front * continuedFraction(a: a, b: b, x: x) / a
        }
        return 1 - front * continuedFraction(a: b, b: a, x: oneMinusX) / b
    }

    private static func continuedFraction(a: Double, b: Double, x: Double) -> Double {
        let tiny = 1e-300
        let qab = a + b, qap = a + 1, qam = a - 1
        var c = 1.0
        var d = 1 - qab * x / qap
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        // The fraction needs O(√max(a, b)) terms; the cap covers ν in the millions.
        for m in 1...100_000 {
            let m = Double(m), m2 = 2 * m
            var aa = m * (b - m) * x / ((qam + m2) * (a + m2))
            d = 1 + aa * d
            if abs(d) < tiny { d = tiny }
            c = 1 + aa / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
            d = 1 + aa * d
            if abs(d) < tiny { d = tiny }
            c = 1 + aa / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) <= 2 * Double.ulpOfOne { break }
        }
        return h
    }
}
