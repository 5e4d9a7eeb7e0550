public import JournalStorage
public import SessionModel
public import TesterPool
public import WireProtocol

/// The studies muevald keeps (issue 16, docs/STUDIES.md): what `muevalctl study …`, `task`,
/// `questionnaire` and the console's study pages change and read. Checks happen in the catalog
/// and in the model's initialisers; this adds what needs the sessions as well.
public final class Studies: Sendable {
    let catalog: Catalog
    let registry: SessionRegistry
    /// The tester pool studies recruit from (Studies+Recruitment.swift).
    public let pool: TesterStore
    /// Seconds an invitation stays usable (`studies.invitation_lifetime`).
    let invitationLifetime: Double
    /// What decides invitations' and recruitments' statuses.
    let lifecycle = InvitationLifecycle()

    public init(catalog: Catalog, registry: SessionRegistry, pool: TesterStore, invitationLifetime: Double = Studies.defaultInvitationLifetime) {
        self.catalog = catalog
        self.registry = registry
        self.pool = pool
        self.invitationLifetime = invitationLifetime
    }

    /// Two weeks: long enough for a tester to find the time, short enough that a forgotten link dies.
    public static let defaultInvitationLifetime: Double = 14 * 86_400

    public func create(name: String, appId: String?, description: String?, webApp: String? = nil, now: Double) throws -> Study {
        try catalog.createStudy(name: name, appId: appId, description: description, webApp: webApp, now: now)
    }

    /// Names the study's web app (`muevalctl study set NAME --web-app URL`), or (nil) removes it.
    public func setWebApp(_ webApp: String?, of study: String) throws -> Study {
        try catalog.setWebApp(webApp, of: study)
    }

    public func list() throws -> [Study] {
        try catalog.studies()
    }

    public func study(_ name: String) throws -> Study {
        try catalog.study(name)
    }

    /// The study, its sessions (open ones with live counts) and its questionnaire answers.
    public func data(_ name: String) throws -> StudyData {
        var data = try catalog.studyData(name)
        let live = Dictionary(uniqueKeysWithValues: registry.openSessions().map { ($0.id, $0.snapshot) })
        data.sessions = data.sessions.map { live[$0.id] ?? $0 }
        return data
    }

    public func addIteration(to study: String, number: Int?, label: String?, now: Double) throws -> StudyIteration {
        try catalog.addIteration(to: study, number: number, label: label, now: now)
    }

    public func addTask(to study: String, _ task: StudyTask) throws -> StudyTask {
        try catalog.addTask(to: study, task)
        return task
    }

    public func addParticipant(to study: String, _ participant: Participant) throws -> Participant {
        try catalog.addParticipant(to: study, participant)
        return participant
    }

    public func addQuestion(to study: String, _ question: StudyQuestion) throws -> StudyQuestion {
        try catalog.addQuestion(to: study, question)
        return question
    }

    /// Records questionnaire answers (all or none); what was recorded is returned.
    public func record(_ responses: StudyResponses, in study: String) throws -> StudyResponses {
        try catalog.record(responses, in: study)
        return responses
    }

    /// Stores an observer's task mark in session `key`. In a study's session the task must be one
    /// of the study's; outside a study any name goes (the analysis pairs begin and end by name).
    public func mark(_ mark: TaskMark, task: String, outcome: TaskOutcome?, comment: String?, in key: String,
                     source: ObserverNote.Source, observer: String?, at deviceTime: Double? = nil, now: Double) async throws -> StoredEvent {
        let note = try ObserverNote(mark, task: task, outcome: outcome, comment: comment, source: source, observer: observer)
        let session = try registry.find(key)
        if let study = session.study, try catalog.study(study).task(named: task) == nil {
            throw StudyError.noTask(study: study, task: task)
        }
        return try await registry.add(note, to: key, at: deviceTime, now: now)
    }
}
