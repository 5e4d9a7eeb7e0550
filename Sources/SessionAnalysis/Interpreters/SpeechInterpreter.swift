public import SessionModel

/// What the tester said while thinking aloud (the session's transcript, docs/SPEECH.md), with the
/// view and screenshot of each moment: for the timeline, the replay and the study's quotes per task.
public struct Speech: InterpretationResult, Equatable {
    public struct Quote: Equatable, Sendable {
        public var segment: TranscriptSegment
        /// The view on screen when it was said, and the screenshot that shows it.
        public var view: String?
        public var screenshot: Int?
    }

    public var quotes: [Quote]
    /// The session's audio streams, so that a report can play a quote where it was said.
    public var streams: [MediaStreamRecord]
}

/// Reads the transcript onto the blackboard, and turns each exclamation ("oh no", "where is"…, spotted
/// by muevald's transcription from its configured list) into a usability problem with its quote: the
/// think-aloud protocol's strongest hint at where a tester was lost.
public struct SpeechInterpreter: Interpreter {
    public let name = "Think-aloud exclamations"
    public let requires: [any InterpretationResult.Type] = [NavigationPath.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [Speech.self, ProblemReport.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let path = try results.required(NavigationPath.self).steps
        let screenshots = try results.required(Screenshots.self)
        var quotes: [Speech.Quote] = []
        var problems: [UsabilityProblem] = []
        for segment in try journal.transcript() {
            let view = path.last { $0.time <= segment.start }?.view
            let quote = Speech.Quote(segment: segment, view: view, screenshot: screenshots.shown(at: segment.start))
            quotes.append(quote)
            guard let exclamation = segment.exclamation else { continue }
            problems.append(UsabilityProblem(
                kind: .exclamation, view: view, time: segment.start, occurrences: 1, screenshot: quote.screenshot,
                evidence: "The tester said \u{201C}\(segment.text)\u{201D} (\(exclamation)) at this moment.",
                recommendation: "Replay the moment and listen: what did the tester expect here? Make that visible on this screen.",
                element: exclamation))
        }
        results.add(Speech(quotes: quotes, streams: try journal.mediaStreams()))
        results.add(ProblemReport(detector: name, problems: problems))
    }
}
