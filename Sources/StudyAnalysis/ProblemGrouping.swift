internal import SessionAnalysis

/// The usability problems of every session grouped per iteration by kind, view and element, and ranked
/// (docs/STUDIES.md, "Problems across participants").
struct ProblemGrouping {
    /// 1 (cosmetic) … 4 (catastrophic), per kind.
    static func severity(of kind: UsabilityProblem.Kind) -> Int {
        switch kind {
        case .freeze: 4
        case .unresponsiveTap, .rageTap, .poorFluidity: 3
        case .navigationLoop, .smallHitTarget, .exclamation, .smallText, .shake: 2
        case .missingPlaceholder: 1
        }
    }

    private struct Key: Hashable {
        var iteration: Int
        var kind: UsabilityProblem.Kind
        var view: String?
        var element: String?
    }

    /// Highest priority first, then most participants, then most occurrences.
    let groups: [ProblemGroup]

    init(digests: [SessionDigest]) {
        // Frequency counts among the participants who recorded a session in the iteration.
        var participantsPerIteration: [Int: Set<String>] = [:]
        var order: [Key] = []
        var groups: [Key: ProblemGroup] = [:]
        for digest in digests {
            let session = digest.session
            participantsPerIteration[session.iteration, default: []].insert(session.participant)
            for problem in digest.problems {
                let key = Key(iteration: session.iteration, kind: problem.kind, view: problem.view, element: problem.element)
                if groups[key] == nil {
                    order.append(key)
                    groups[key] = ProblemGroup(
                        id: "", iteration: key.iteration, kind: key.kind, view: key.view, element: key.element, participants: [],
                        frequency: 0, severity: Self.severity(of: key.kind), priority: 0, occurrences: 0,
                        evidence: problem.evidence, recommendation: problem.recommendation, sightings: [])
                }
                groups[key]!.occurrences += problem.occurrences
                groups[key]!.sightings.append(ProblemSighting(session: session.id, participant: session.participant, time: problem.time,
                                                              screenshot: problem.screenshot, frame: problem.frame, point: problem.point))
            }
        }
        var ids: Set<String> = []
        var ranked: [ProblemGroup] = order.map { key in
            var group = groups[key]!
            group.participants = Set(group.sightings.map(\.participant)).sorted()
            group.frequency = Double(group.participants.count) / Double(participantsPerIteration[key.iteration]!.count)
            group.priority = group.frequency * Double(group.severity)
            group.id = Self.uniqueID(Self.id(of: key), among: &ids)
            return group
        }
        ranked.sort {
            ($0.priority, $0.participants.count, $0.occurrences) != ($1.priority, $1.participants.count, $1.occurrences)
                ? ($0.priority, $0.participants.count, $0.occurrences) > ($1.priority, $1.participants.count, $1.occurrences)
                : ($0.iteration, $0.id) < ($1.iteration, $1.id)
        }
        self.groups = ranked
    }

    /// `i2-unresponsive-tap-PostsViewController-UIImageView-leaf`: iteration, kind, view and element.
    private static func id(of key: Key) -> String {
        (["i\(key.iteration)", key.kind.rawValue, key.view ?? "no-view"] + (key.element.map { [$0] } ?? []))
            .map(slug).joined(separator: "-")
    }

    /// Letters and digits kept; every other run of characters becomes one `-`.
    private static func slug(_ text: String) -> String {
        text.split { !($0.isLetter || $0.isNumber) }.joined(separator: "-")
    }

    /// Two keys whose slugs coincide (`"a b"`, `"a-b"`) get `-2`, `-3`… so ids stay unique.
    private static func uniqueID(_ id: String, among ids: inout Set<String>) -> String {
        var candidate = id, suffix = 1
        while !ids.insert(candidate).inserted {
            suffix += 1
            candidate = "\(id)-\(suffix)"
        }
        return candidate
    }
}
