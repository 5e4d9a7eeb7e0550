/// Whether `actual` is within `tolerance` of `expected` (absolute).
func isClose(_ actual: Double?, _ expected: Double, within tolerance: Double) -> Bool {
    guard let actual else { return false }
    return abs(actual - expected) <= tolerance
}

/// Whether `actual` rounds to `percent` whole percent, as the textbooks print intervals.
func roundsTo(_ actual: Double?, percent: Double) -> Bool {
    guard let actual else { return false }
    return (actual * 100).rounded() == percent
}
