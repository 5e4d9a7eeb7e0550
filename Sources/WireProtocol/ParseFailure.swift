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
        return detail + " (at \(Self.location(path.reversed())))"
    }

    /// `touches[1].x` for the steps outermost first.
    static func location(_ steps: some Sequence<Step>) -> String {
        var location = ""
        for step in steps {
            switch step {
            case .key(let key): location += location.isEmpty ? key : "." + key
            case .index(let index): location += "[\(index)]"
            }
        }
        return location
    }
}
