/// Why a session could not be analysed.
public enum AnalysisError: Error, CustomStringConvertible, Equatable {
    case fileNotFound(String)
    case notASessionFile(path: String, reason: String)
    case unreadablePayload(path: String, event: Int64, reason: String)
    /// A bug in an interpreter: it ran without a result it required.
    case missingResult(String)
    /// A bug in an interpreter: it declared a result and did not add it.
    case resultNotProduced(interpreter: String, result: String)
    /// A temporary file a result is kept in (`ScratchFile`: the timeline, the strokes) could not be made, written
    /// or read back.
    case notKeptInScratch(String, String)

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            "no session file at \(path): give a session id or name known to muevald, or the path of a .sqlite session file"
        case .notASessionFile(let path, let reason):
            "\(path) is not a muEval session file (\(reason)); session files are in the daemon's data directory, under sessions/"
        case .unreadablePayload(let path, let event, let reason):
            "event \(event) of \(path) has an unreadable payload (\(reason)); the file may be damaged: check it with `sqlite3 \(path) 'PRAGMA integrity_check'`"
        case .missingResult(let type):
            "internal error: an interpreter ran without the \(type) it requires"
        case .resultNotProduced(let interpreter, let result):
            "internal error: interpreter \(interpreter) did not produce the \(result) it declares"
        case .notKeptInScratch(let purpose, let reason):
            "the analysis's \(purpose) could not be kept in a temporary file (\(reason)): check the free space beside the session file and in TMPDIR"
        }
    }
}
