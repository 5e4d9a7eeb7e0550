/// A console page: its own body (a resource holding the page's `<main>`) in the one frame all pages
/// share (frame.html: head, styles, script tag; navigation.html: the top navigation), composed once at
/// start-up by `ConsoleAssets`. The frame carries no inline script or style, so the console's content
/// security policy (`default-src 'self'`) holds for every page.
struct ConsolePage: Sendable {
    /// The navigation's entries; a page in one of them has it marked current.
    enum Section: String, CaseIterable, Sendable {
        case sessions, studies, pool, server
    }

    /// The body resource, also the name the composed page is kept under.
    let file: String
    let title: String
    /// The page's ES module in /assets, loaded from the head.
    let script: String?
    let bodyClass: String?
    /// Marked current in the navigation.
    let section: Section?
    let hasNavigation: Bool
    /// A page for a tester's phone, without a login (`ConsoleVisitors`): no navigation, the phone
    /// layout, and its visitor's CSRF token in the head.
    let isForVisitors: Bool

    init(_ file: String, title: String, script: String? = nil, bodyClass: String? = nil, section: Section? = nil,
         hasNavigation: Bool = true) {
        self.file = file
        self.title = title
        self.script = script
        self.bodyClass = bodyClass
        self.section = section
        self.hasNavigation = hasNavigation
        isForVisitors = false
    }

    private init(visitors file: String, title: String, script: String) {
        self.file = file
        self.title = title
        self.script = script
        bodyClass = "phone"
        section = nil
        hasNavigation = false
        isForVisitors = true
    }

    /// `LoginCheck` shows it to a browser without a login.
    static let login = ConsolePage("login.html", title: "Log in", hasNavigation: false)

    /// The pages and the paths they are served at.
    static let routed: [(path: String, page: ConsolePage)] = [
        ("/", ConsolePage("sessions.html", title: "Sessions", script: "sessions.js", section: .sessions)),
        ("/server", ConsolePage("server.html", title: "Server", script: "server.js", section: .server)),
        ("/sessions/:session", ConsolePage("session.html", title: "Session", script: "session.js")),
        ("/sessions/:session/live", ConsolePage("live.html", title: "Live", script: "live.js")),
        ("/sessions/:session/replay", ConsolePage("replay.html", title: "Replay", script: "replay.js", bodyClass: "replay")),
        ("/studies", ConsolePage("studies.html", title: "Studies", script: "studies.js", section: .studies)),
        ("/study", ConsolePage("study.html", title: "Study", script: "study.js", section: .studies)),
        ("/questionnaire", ConsolePage("questionnaire.html", title: "Questionnaire", script: "questionnaire.js",
                                       bodyClass: "questionnaire", section: .studies)),
        ("/pool", ConsolePage("pool.html", title: "Tester pool", script: "pool.js", section: .pool)),
    ]

    /// The pages without a login; their routes check the key or code in the address first (ConsoleVisitorAPI).
    static let enrol = ConsolePage(visitors: "enrol.html", title: "Take part", script: "enrol.js")
    static let withdraw = ConsolePage(visitors: "withdraw.html", title: "Withdraw", script: "withdraw.js")
    static let invitation = ConsolePage(visitors: "invitation.html", title: "Your invitation", script: "invitation.js")

    /// Parts of pages that more than one page includes as `{{include:NAME}}`.
    static let fragments = ["questionnaire-form.html"]

    static var all: [ConsolePage] { [login, enrol, withdraw, invitation] + routed.map(\.page) }
}

/// The frame and navigation templates, and how a page's values fill them.
struct ConsoleFrame: Sendable {
    let frame: String
    let navigation: String

    /// The whole page. Every value is the console's own (titles, file names, the vocabulary), never
    /// a device's string, so none needs escaping; a placeholder left unfilled is a start-up error.
    func compose(_ page: ConsolePage, body: String) throws -> String {
        var navigation = ""
        if page.hasNavigation {
            navigation = self.navigation
            for section in ConsolePage.Section.allCases {
                navigation = navigation.replacingOccurrences(of: "{{current:\(section.rawValue)}}",
                                                             with: section == page.section ? #" class="current""# : "")
            }
        }
        let filledBody = ConsoleVocabulary.fill(body)
        var html = frame
        for (placeholder, value) in [
            ("{{title}}", page.title),
            ("{{script}}", page.script.map { #"<script type="module" src="/assets/\#($0)"></script>"# + "\n" } ?? ""),
            ("{{body-class}}", page.bodyClass.map { #" class="\#($0)""# } ?? ""),
            ("{{navigation}}", navigation),
            ("{{head}}", page.isForVisitors ? #"<meta name="csrf-token" content="\#(ConsoleVisitors.tokenPlaceholder)">"# + "\n" : ""),
        ] {
            html = html.replacingOccurrences(of: placeholder, with: value)
        }
        // The body goes in last, so that nothing in it is taken for a placeholder.
        let parts = html.components(separatedBy: "{{main}}")
        guard parts.count == 2, !parts.joined().contains("{{"), !filledBody.contains("{{") else {
            throw ConsoleError.misconfigured("\(page.file) or the console's frame has a placeholder muevald does not fill; reinstall muevald")
        }
        html = parts[0] + filledBody + parts[1]
        return html
    }
}
