/// Why a study could not be analysed, worded for the person who asked for the report.
public enum StudyAnalysisError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadableSession(id: Int64, path: String, reason: String)
    case unassignedSession(id: Int64, path: String)
    case unknownIteration(Int, known: [Int])

    public var description: String {
        switch self {
        case .unreadableSession(let id, let path, let reason):
            "session \(id) (\(path)) cannot be analysed: \(reason)"
        case .unassignedSession(let id, let path):
            "session \(id) (\(path)) names no iteration and participant, neither in the catalog nor in its file; start study sessions with --study, --iteration and --participant"
        case .unknownIteration(let number, let known):
            "the study has no iteration \(number); its iterations are \(known.isEmpty ? "none yet" : known.map(String.init).joined(separator: ", "))"
        }
    }
}
