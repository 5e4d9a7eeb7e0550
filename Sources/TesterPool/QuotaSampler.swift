internal import Crypto
public import SessionModel

/// Chooses `count` testers for a study by quota sampling (issue 32, docs/STUDIES.md): every one meets
/// the requirements, each quota gets exactly its number when the pool allows and never more, and the
/// rest of the count is filled with testers that push no quota over. Nobody in `excluded` (the study's
/// participants) and nobody twice.
///
/// Among the testers that qualify equally, the order is random but follows from the seed: each tester's
/// rank is a hash of the seed and their code, so the same seed over the same pool chooses the same
/// testers, whatever order the pool is listed in, and a tester joining the pool does not reorder the others.
/// Quotas are filled in the order given, each with the candidates that also count towards the most
/// other quotas still open first.
public struct QuotaSampler: Sendable, Equatable {
    public var count: Int
    public var quotas: [Quota]
    public var requirements: [Requirement]
    public var excluded: Set<String>
    public var seed: UInt64

    /// Throws when a quota asks for more than `count`, or the same quota is given twice.
    public init(count: Int, quotas: [Quota] = [], requirements: [Requirement] = [], excluded: Set<String> = [], seed: UInt64) throws(PoolError) {
        for (index, quota) in quotas.enumerated() {
            guard quota.count <= count else { throw .quotaOverCount(quota, count: count) }
            guard !quotas[..<index].contains(where: { $0.field == quota.field && $0.value == quota.value }) else {
                throw .badQuota("\(quota) (given twice)")
            }
        }
        self.count = count
        self.quotas = quotas
        self.requirements = requirements
        self.excluded = excluded
        self.seed = seed
    }

    public func select(from pool: [Tester]) -> QuotaSelection {
        let candidates = pool
            .filter { tester in !excluded.contains(tester.code) && requirements.allSatisfy { $0.admits(tester.profile) } }
            .map { (rank: rank($0.code), tester: $0) }
            .sorted { ($0.rank, $0.tester.code) < ($1.rank, $1.tester.code) }
            .map(\.tester)
        var state = Tally(quotas: quotas)
        for (index, quota) in quotas.enumerated() {
            let matching = candidates.filter(quota.matches)
            while state.selected.count < count, state.filled[index] < quota.count, let next = state.mostHelpful(of: matching) {
                state.select(next)
            }
        }
        for tester in candidates where state.selected.count < count && state.fits(tester) {
            state.select(tester)
        }
        var shortfalls = zip(quotas, state.filled).compactMap { quota, filled in
            filled < quota.count ? Shortfall(quota: "\(quota.field)=\(quota.value)", selected: filled, wanted: quota.count) : nil
        }
        if state.selected.count < count { shortfalls.append(Shortfall(quota: nil, selected: state.selected.count, wanted: count)) }
        return QuotaSelection(selected: state.selected, shortfalls: shortfalls)
    }

    private func rank(_ code: String) -> UInt64 {
        SHA256.hash(data: Array("\(seed):\(code)".utf8)).prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// What is chosen so far and how full each quota is.
    private struct Tally {
        let quotas: [Quota]
        var filled: [Int]
        var selected: [Tester] = []
        var chosen: Set<String> = []

        init(quotas: [Quota]) {
            self.quotas = quotas
            filled = quotas.map { _ in 0 }
        }

        /// Not chosen yet, and no quota it counts towards is full.
        func fits(_ tester: Tester) -> Bool {
            !chosen.contains(tester.code) && zip(quotas, filled).allSatisfy { quota, filled in !quota.matches(tester) || filled < quota.count }
        }

        /// The fitting candidate that counts towards the most quotas still open (a novice woman before an
        /// expert one while both quotas are open, so that one quota does not use up another's testers);
        /// the seeded order breaks ties.
        func mostHelpful(of candidates: [Tester]) -> Tester? {
            var best: (tester: Tester, helps: Int)?
            for tester in candidates where fits(tester) {
                let helps = zip(quotas, filled).count { quota, filled in quota.matches(tester) && filled < quota.count }
                if helps > best?.helps ?? 0 { best = (tester, helps) }
            }
            return best?.tester
        }

        mutating func select(_ tester: Tester) {
            selected.append(tester)
            chosen.insert(tester.code)
            for (index, quota) in quotas.enumerated() where quota.matches(tester) { filled[index] += 1 }
        }
    }
}

/// The testers chosen, in the order they were chosen, and what could not be filled.
public struct QuotaSelection: Sendable, Equatable {
    public var selected: [Tester]
    /// Empty when every quota and the count were met.
    public var shortfalls: [Shortfall]
}

extension Quota {
    func matches(_ tester: Tester) -> Bool { tester.profile[field] == value }
}
