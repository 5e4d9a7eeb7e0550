internal import PostgresNIO

public enum ReplicationError: Error, Sendable, CustomStringConvertible {
    case badSettings(String)
    case newerSchema(found: Int, known: Int)
    case timedOut(seconds: Double)
    case unreachable(target: String, reason: String)
    case noSchema(target: String)
    case noSuchSession(selector: String, candidates: [String])
    /// The session's uuid is `owner`'s session in the shared database: this lab writes nothing of it.
    case ownedByAnotherLab(owner: String)

    /// The server or the network, rather than what is in the database or the settings: worth a retry as it is.
    package var isConnectionTrouble: Bool {
        switch self {
        case .timedOut, .unreachable: true
        case .badSettings, .newerSchema, .noSchema, .noSuchSession, .ownedByAnotherLab: false
        }
    }

    public var description: String {
        switch self {
        case .badSettings(let reason): reason
        case .unreachable(let target, let reason):
            "cannot connect to PostgreSQL at \(target): \(reason)"
        case .noSchema(let target):
            "\(target) holds no muEval sessions: no muevald has replicated into it yet (storage.postgres.url in muevald's configuration)"
        case .noSuchSession(let selector, let candidates):
            candidates.isEmpty
                ? "the shared database has no session \"\(selector)\"; `muevalctl sessions --from URL` lists them"
                : "\"\(selector)\" is a session of several labs (\(candidates.joined(separator: ", "))): name one as LAB:ID"
        case .timedOut(let seconds):
            "no answer within \(seconds) s (storage.postgres.timeout)"
        case .ownedByAnotherLab(let owner):
            "the session is \(owner)'s in the shared database: this lab leaves its row and events alone"
        case .newerSchema(let found, let known):
            "the PostgreSQL database has muEval schema version \(found), written by a newer muEval; this muevald knows versions up to \(known) and leaves it alone: upgrade this muevald"
        }
    }
}

extension ReplicationError {
    /// What went wrong inside a transaction, rather than the transaction's wrapper around it.
    package static func cause(of error: any Error) -> any Error {
        guard let transaction = error as? PostgresTransactionError else { return error }
        return transaction.closureError ?? transaction.beginError ?? transaction.commitError ?? error
    }

    /// PostgresNIO's errors print their query; say what went wrong and no more (no credentials either).
    package static func reason(for error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
