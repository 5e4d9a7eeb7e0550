/// The page at chosen times, from a session's page records read once, in the order they were stored (the order the
/// phone sent them): the page at time `t` is every record up to the first one timestamped after `t` applied. Only one
/// page is built; each state kept is a copy that shares its nodes until the page changes again.
public struct PageSampler {
    private var page = PageTree()
    private let times: [Double]
    /// Indices into `times`, earliest first.
    private let order: [Int]
    private var next = 0
    private var states: [PageTree?]

    /// `times`: device times, in any order (one that is no finite number gets no page).
    public init(times: [Double]) {
        self.times = times
        order = times.indices.filter { times[$0].isFinite }.sorted { (times[$0], $0) < (times[$1], $1) }
        states = Array(repeating: nil, count: times.count)
    }

    /// The next stored record: its class, device time and `dom` JSON (`isCurrent`: as `PageTree.apply` takes it).
    public mutating func add(_ pageClass: PageRecordClass, time: Double, dom: some Collection<UInt8>, isCurrent: Bool = false) {
        keep(before: time)
        guard next < order.count else { return }
        page.apply(pageClass, dom: dom, isCurrent: isCurrent)
    }

    /// Whether a later record can still change a state: false once every time asked for has passed.
    public var wantsMore: Bool { next < order.count }

    /// The page at each time asked for, in the order asked; nil where no snapshot had come yet.
    public consuming func finish() -> [PageTree?] {
        keep(before: .infinity)
        return states
    }

    private mutating func keep(before time: Double) {
        while next < order.count, times[order[next]] < time {
            states[order[next]] = page.hasPage ? page : nil
            next += 1
        }
    }
}

extension PageTree {
    /// The page at `time` from `records` (class, device time, `dom` JSON) in the order they were stored.
    public static func at(_ time: Double, records: some Sequence<(PageRecordClass, Double, [UInt8])>) -> PageTree? {
        var sampler = PageSampler(times: [time])
        for (pageClass, recordTime, dom) in records {
            sampler.add(pageClass, time: recordTime, dom: dom)
            if !sampler.wantsMore { break }
        }
        return sampler.finish()[0]
    }
}
