public import OrderedCollections

/// A property list value as a tree, for building messages and reading stored events back.
/// Events on the hot path never become trees: the decoder writes their typed JSON directly.
public indirect enum PlistValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 1970-01-01T00:00:00Z.
    case date(Double)
    case data([UInt8])
    case array([PlistValue])
    /// Keys keep their document order, which the typed JSON keeps too.
    case dict(OrderedDictionary<String, PlistValue>)
}
