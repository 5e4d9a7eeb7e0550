public import SessionModel
public import WireProtocol
/// One distinct screenshot: the index the other results use to refer to it.
public struct Screenshot: Equatable, Sendable {
    public var index: Int
    public var blob: BlobReference
    /// The view it shows (of its first take).
    public var view: String?
    public var firstTaken: Double
    /// The screen in points: the UI state tree's window, else the device's screen.
    public var screen: Size?
}

/// The session's screenshots, ordered by the time they were first taken and de-duplicated by content
/// (thesis 5.3, `ScreenshotInterpreter`): the same image taken twice has one index.
public struct Screenshots: InterpretationResult, Equatable {
    public var shots: [Screenshot]
    /// Every take, in time order: (time, index).
    public var takes: [(time: Double, index: Int)]

    /// The last screenshot taken at or before `time`: what the screen showed then.
    public func shown(at time: Double) -> Int? {
        let after = takes.partitioningIndex { $0.time > time }
        return after == takes.startIndex ? nil : takes[after - 1].index
    }

    /// How long after a screenshot the page under it is taken, at most (a web session that recorded its page): the
    /// phone sends the snapshot of a page it navigated to after the view's screenshot, once it walked it in idle time.
    public static let pageSettle = 2.0

    /// When the page under screenshot `index` is taken: `pageSettle` after its first take, or just before the next
    /// screenshot if sooner.
    public func pageTime(of index: Int) -> Double {
        let first = shots[index].firstTaken
        let next = takes.first { $0.time > first }?.time.nextDown ?? .infinity
        return max(first, min(first + Self.pageSettle, next))
    }

    public static func == (lhs: Screenshots, rhs: Screenshots) -> Bool {
        lhs.shots == rhs.shots && lhs.takes.elementsEqual(rhs.takes) { $0 == $1 }
    }
}

public struct ScreenshotsInterpreter: Interpreter {
    public let name = "Screenshots"
    public let requires: [any InterpretationResult.Type] = [Interactions.self]
    public let produces: [any InterpretationResult.Type] = [Screenshots.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let takes = try results.required(Interactions.self).screenshots.sorted { $0.time < $1.time }
        var shots: [Screenshot] = []
        var indexBySHA: [String: Int] = [:]
        var timeline: [(time: Double, index: Int)] = []
        for take in takes {
            let index = indexBySHA[take.blob.sha256] ?? {
                let index = shots.count
                shots.append(Screenshot(index: index, blob: take.blob, view: take.view, firstTaken: take.time,
                                        screen: take.screen ?? journal.screenSize))
                indexBySHA[take.blob.sha256] = index
                return index
            }()
            timeline.append((take.time, index))
        }
        results.add(Screenshots(shots: shots, takes: timeline))
    }
}
