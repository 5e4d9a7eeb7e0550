/// The thresholds of the interpreters (docs/REPORTS.md, "Problem rules"). Part of a saved report configuration;
/// every field is optional in its JSON, so a configuration names only what it changes.
public struct AnalysisOptions: Codable, Sendable, Equatable {
    /// A tap with no UI event and no screen change within this many seconds did nothing.
    public var responseWindow: Double = 1.0
    /// An input whose screen update comes only after this many seconds, with the user waiting or retrying the same element, is a freeze.
    public var freezeSeconds: Double = 2.0
    /// Rage taps: at least `rageTapCount` taps, each within `rageTapInterval` seconds of the previous,
    /// all within `rageTapRadius` points of the first.
    public var rageTapCount: Int = 3
    public var rageTapInterval: Double = 0.3
    public var rageTapRadius: Double = 30
    /// A finger that moves at most this far (points) and lifts within `tapMaxDuration` seconds taps.
    public var tapSlop: Double = 10
    public var tapMaxDuration: Double = 0.5
    /// The smallest hit target (points), from Apple's iOS Human Interface Guidelines.
    public var minimumHitTarget: Double = 44
    /// Back-and-forth between two views this many times (A→B→A counts once) is a navigation loop.
    public var loopRoundTrips: Int = 2
    /// Views grouped into functionalities (view name → functionality) for the time shares of seed 001 Fig. 1;
    /// a view not listed is its own functionality.
    public var functionalities: [String: String] = [:]

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = AnalysisOptions()
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
            try container.decodeIfPresent(T.self, forKey: key) ?? fallback
        }
        responseWindow = try value(.responseWindow, defaults.responseWindow)
        freezeSeconds = try value(.freezeSeconds, defaults.freezeSeconds)
        rageTapCount = try value(.rageTapCount, defaults.rageTapCount)
        rageTapInterval = try value(.rageTapInterval, defaults.rageTapInterval)
        rageTapRadius = try value(.rageTapRadius, defaults.rageTapRadius)
        tapSlop = try value(.tapSlop, defaults.tapSlop)
        tapMaxDuration = try value(.tapMaxDuration, defaults.tapMaxDuration)
        minimumHitTarget = try value(.minimumHitTarget, defaults.minimumHitTarget)
        loopRoundTrips = try value(.loopRoundTrips, defaults.loopRoundTrips)
        functionalities = try value(.functionalities, defaults.functionalities)
    }

    public func functionality(of view: String) -> String { functionalities[view] ?? view }
}
