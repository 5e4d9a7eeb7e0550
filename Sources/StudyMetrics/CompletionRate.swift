/// Task completion rates (successes out of attempts).
public enum CompletionRate {
    /// value = x/n; interval = adjusted-Wald (Agresti–Coull) at `confidence`, clipped to [0, 1]. nil when trials == 0,
    /// when successes is not in 0…trials, or when `confidence` is not strictly between 0 and 1.
    ///
    /// With z = Φ⁻¹(1 − α/2): p̂_adj = (x + z²/2) / (n + z²), interval p̂_adj ± z·√(p̂_adj(1 − p̂_adj) / (n + z²)).
    /// Sauro & Lewis, "Quantifying the User Experience", 2nd ed. (2016), ch. 3, "Adjusted-Wald interval: add two
    /// successes and two failures"; Agresti & Coull (1998), The American Statistician 52, 119–126.
    /// Examples there: 9 of 10 → 57 %–100 %; 7 of 10 → 39 %–90 %.
    public static func adjustedWald(successes: Int, trials: Int, confidence: Double = 0.95) -> Estimate? {
        guard trials > 0, (0...trials).contains(successes), isConfidence(confidence) else { return nil }
        let z = Normal.quantile(upperTail(confidence))
        let adjustedTrials = Double(trials) + z * z
        let adjusted = (Double(successes) + z * z / 2) / adjustedTrials
        let margin = z * (adjusted * (1 - adjusted) / adjustedTrials).squareRoot()
        let interval = Interval(low: adjusted - margin, high: adjusted + margin).clipped(to: 0...1)
        return Estimate(value: Double(successes) / Double(trials), interval: interval, n: trials)
    }
}
