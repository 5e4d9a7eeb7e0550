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
    /// The smallest readable text (points): the iOS Human Interface Guidelines' minimum of 11 points
    /// (Typography: "Default and minimum sizes", the Caption 2 style).
    public var minimumFontSize: Double = 11
    /// Shakes (docs/REPORTS.md, "Shakes"): at least `shakeReversals` changes of direction between samples of
    /// acceleration beyond gravity of at least `shakeThreshold` g, each within `shakeWindow` seconds of the previous.
    public var shakeThreshold: Double = 1.5
    public var shakeReversals: Int = 3
    public var shakeWindow: Double = 0.5
    /// Fluidity (docs/REPORTS.md, "Fluidity"): hitch time per second of rendering, in milliseconds per second;
    /// Apple's ratings (WWDC 2020 "Eliminate animation hitches with XCTest"): under 5 good, to 10 warning, above critical.
    public var hitchRatioWarning: Double = 5
    public var hitchRatioCritical: Double = 10
    /// Launch to the first frame (seconds): Apple's goal of 400 ms (WWDC 2019 "Optimizing App Launch"), and
    /// Nielsen's 1 s limit of the user's flow of thought above which it is critical.
    public var launchWarning: Double = 0.4
    public var launchCritical: Double = 1.0
    /// A view transition (seconds): UIKit's push animation takes 0.35 s; beyond 0.5 s a warning, beyond Nielsen's 1 s critical.
    public var transitionWarning: Double = 0.5
    public var transitionCritical: Double = 1.0
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
        minimumFontSize = try value(.minimumFontSize, defaults.minimumFontSize)
        shakeThreshold = try value(.shakeThreshold, defaults.shakeThreshold)
        shakeReversals = try value(.shakeReversals, defaults.shakeReversals)
        shakeWindow = try value(.shakeWindow, defaults.shakeWindow)
        hitchRatioWarning = try value(.hitchRatioWarning, defaults.hitchRatioWarning)
        hitchRatioCritical = try value(.hitchRatioCritical, defaults.hitchRatioCritical)
        launchWarning = try value(.launchWarning, defaults.launchWarning)
        launchCritical = try value(.launchCritical, defaults.launchCritical)
        transitionWarning = try value(.transitionWarning, defaults.transitionWarning)
        transitionCritical = try value(.transitionCritical, defaults.transitionCritical)
        loopRoundTrips = try value(.loopRoundTrips, defaults.loopRoundTrips)
        functionalities = try value(.functionalities, defaults.functionalities)
    }

    public func functionality(of view: String) -> String { functionalities[view] ?? view }
}
