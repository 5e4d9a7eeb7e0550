/// A parse error on its way out of `MessageParser`; the path to the failing value is added while unwinding.
struct ParseFailure: Error {
    enum Step {
        case key(String)
        case index(Int)
    }

    var kind: WireErrorKind
    var detail: String
    /// Innermost step first.
    var path: [Step] = []

    init(_ kind: WireErrorKind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The detail, then where in the message it happened, e.g. `… (at touches[1].x)`.
    var message: String {
        guard !path.isEmpty else { return detail }
        var location = ""
        for step in path.reversed() {
            switch step {
            case .key(let key): location += location.isEmpty ? key : "." + key
            case .index(let index): location += "[\(index)]"
            }
        }
        return detail + " (at \(location))"
    }
}
