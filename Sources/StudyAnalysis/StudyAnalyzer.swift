public import SessionAnalysis
public import SessionModel

/// Analyses a study's sessions and computes its numbers (docs/STUDIES.md).
public enum StudyAnalyzer {
    /// The results of the sessions of `data` (only those of `iteration` when given) from their digests: each
    /// session's stored digest when current, else its analysis reduced to what the results need (and stored with
    /// `.readWrite`), at most `parallelism` sessions analysed at a time.
    public static func analyze(_ data: StudyData, iteration: Int? = nil, options: AnalysisOptions = AnalysisOptions(),
                               parallelism: Int = 2, digests storage: DigestStorage = .readOnly) async throws -> StudyResults {
        if let iteration, data.study.iteration(iteration) == nil, !data.sessions.contains(where: { $0.iteration == iteration }) {
            throw StudyAnalysisError.unknownIteration(iteration, known: data.study.iterations.map(\.number))
        }
        // A session the catalog does not place is placed by its file, after its analysis.
        let records = data.sessions.filter { iteration == nil || $0.iteration == nil || $0.iteration == iteration }
        let digests = try await digest(records, study: data.study, options: options, parallelism: parallelism, storage: storage)
            .filter { iteration == nil || $0.session.iteration == iteration }
        return StudyAssembly(study: data.study, digests: digests, responses: data.responses, only: iteration).results
    }

    /// The digests of `records` in their order, got by at most `parallelism` child tasks at a time: each reads
    /// one session's stored digest, or analyses the file (synchronous work) and keeps only its digest.
    static func digest(_ records: [SessionRecord], study: Study, options: AnalysisOptions, parallelism: Int,
                       storage: DigestStorage) async throws -> [SessionDigest] {
        try await withThrowingTaskGroup(of: (Int, SessionDigest).self) { group in
            var digests = [SessionDigest?](repeating: nil, count: records.count)
            var next = 0
            while next < records.count {
                if next >= max(1, parallelism), let done = try await group.next() {
                    digests[done.0] = done.1
                }
                let index = next, record = records[index]
                group.addTask {
                    (index, try await BlockingWork.run { try StoredDigests.digest(of: record, tasks: study.tasks, options: options, storage: storage) })
                }
                next += 1
            }
            while let done = try await group.next() {
                digests[done.0] = done.1
            }
            return digests.compactMap { $0 }
        }
    }
}
