/// Compares secrets (device tokens, pairing codes, the console's CSRF tokens) in time independent
/// of where they differ, so that timing does not reveal how much of a guess was right.
public func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let (x, y) = (Array(a.utf8), Array(b.utf8))
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}
