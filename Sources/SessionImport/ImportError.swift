public import SessionModel

/// Why a file cannot be imported, with where in it: `FILE:LINE:COLUMN: reason` for text formats (as
/// compilers write it, so editors jump there), `FILE: byte N: reason` where lines mean nothing.
public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Position: Sendable, Equatable, CustomStringConvertible {
        /// 1-based line and column (in characters).
        case text(line: Int, column: Int)
        /// 0-based byte offset.
        case byte(Int64)

        public var description: String {
            switch self {
            case .text(let line, let column): "\(line):\(column)"
            case .byte(let offset): "byte \(offset)"
            }
        }
    }

    /// The file's name as given.
    public var file: String
    public var position: Position?
    public var reason: String

    public init(file: String, at position: Position? = nil, _ reason: String) {
        self.file = file
        self.position = position
        self.reason = reason
    }

    public var description: String {
        switch position {
        case .text?: "\(file):\(position!): \(reason)"
        case .byte?: "\(file): \(position!): \(reason)"
        case nil: "\(file): \(reason)"
        }
    }
}

/// An import refused because the file was imported before (`--again` imports it once more).
public struct AlreadyImported: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var session: SessionRecord

    public var description: String {
        "\(file) was already imported as session \(session.id) (\(session.name)); pass --again to import it once more"
    }
}
