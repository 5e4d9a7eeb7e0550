internal import SessionCore
internal import SessionModel
internal import Metrics
internal import NIOConcurrencyHelpers
internal import Prometheus

/// `/metrics`: the counters `muevalctl status` shows, in Prometheus' text format.
///
/// The capture path counts with plain atomics (CaptureCounters), which cost nothing per event;
/// a scrape carries their growth since the previous scrape into swift-metrics counters backed by
/// swift-prometheus' registry, which writes the exposition format. The registry is our own, not the
/// process-wide MetricsSystem, so that tests can run several daemons in one process.
final class ConsoleMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let counters: [(metric: Metrics.Counter, value: @Sendable (CounterSnapshot) -> Int)]
    private let connectionsOpen: Metrics.Gauge
    private let sessionsOpen: Metrics.Gauge
    private let sessionsRecording: Metrics.Gauge
    private let followers: Metrics.Gauge
    private let storageFailing: Metrics.Gauge
    /// Replication into PostgreSQL (docs/POSTGRES.md); 0 when none is configured.
    private let replicationUp: Metrics.Gauge
    private let replicationPending: Metrics.Gauge
    private let replicationLag: Metrics.Gauge
    /// Open files against the limit, and connections by kind against the budget (docs/SECURITY.md, "Descriptors").
    private let descriptorsOpen: Metrics.Gauge
    private let descriptorsLimit: Metrics.Gauge
    private let connectionBudget: Metrics.Gauge
    private let connectionsByKind: [(metric: Metrics.Gauge, value: @Sendable (DescriptorStatus) -> Int)]
    private let budgetCounters: [(metric: Metrics.Counter, value: @Sendable (DescriptorStatus) -> Int)]
    /// Connections and upgrades refused at the door, by reason (`mueval_refusals_total{reason="web_per_address"}`).
    private let refusals: [(metric: Metrics.Counter, reason: String)]
    /// Stopped sessions' automatic reports in the durable queue: waiting, and being written (docs/REPORTS.md).
    private let reportsWaiting: Metrics.Gauge
    private let reportsWriting: Metrics.Gauge
    /// The sync every session's commits share (docs/STORAGE.md): syncs run and failed.
    private let sharedSyncs: Metrics.Counter
    private let sharedSyncFailures: Metrics.Counter
    private let previousSync = NIOLockedValueBox(StorageSyncStatus(syncs: 0, failures: 0))
    /// What the counters had at the previous scrape.
    private let previous = NIOLockedValueBox(CounterSnapshot())
    private let previousBudget = NIOLockedValueBox<DescriptorStatus?>(nil)

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        func counter(_ name: String, _ value: @escaping @Sendable (CounterSnapshot) -> Int) -> (Metrics.Counter, @Sendable (CounterSnapshot) -> Int) {
            (Metrics.Counter(label: "mueval_" + name + "_total", dimensions: [], factory: factory), value)
        }
        counters = [
            counter("connections_accepted", \.connectionsAccepted),
            counter("connections_refused", \.connectionsRefused),
            counter("events_received", \.eventsReceived),
            counter("events_stored", \.eventsStored),
            counter("events_duplicate", \.eventsDuplicate),
            counter("events_filtered", \.eventsFiltered),
            counter("events_rejected_no_session", \.eventsRejectedNoSession),
            counter("events_failed_storage", \.eventsFailedStorage),
            counter("malformed_messages", \.malformedMessages),
            counter("replies_dropped", \.repliesDropped),
            counter("authentication_failures", \.authenticationFailures),
            counter("pairing_refused", \.pairingRefused),
            counter("tls_handshake_failures", \.tlsHandshakeFailures),
            counter("bytes_received", \.bytesReceived),
        ].map { (metric: $0.0, value: $0.1) }
        connectionsOpen = Metrics.Gauge(label: "mueval_connections_open", dimensions: [], factory: factory)
        sessionsOpen = Metrics.Gauge(label: "mueval_sessions_open", dimensions: [], factory: factory)
        sessionsRecording = Metrics.Gauge(label: "mueval_sessions_recording", dimensions: [], factory: factory)
        followers = Metrics.Gauge(label: "mueval_live_followers", dimensions: [], factory: factory)
        storageFailing = Metrics.Gauge(label: "mueval_storage_failing", dimensions: [], factory: factory)
        replicationUp = Metrics.Gauge(label: "mueval_replication_up", dimensions: [], factory: factory)
        replicationPending = Metrics.Gauge(label: "mueval_replication_pending_events", dimensions: [], factory: factory)
        replicationLag = Metrics.Gauge(label: "mueval_replication_lag_seconds", dimensions: [], factory: factory)
        descriptorsOpen = Metrics.Gauge(label: "mueval_descriptors_open", dimensions: [], factory: factory)
        descriptorsLimit = Metrics.Gauge(label: "mueval_descriptors_limit", dimensions: [], factory: factory)
        connectionBudget = Metrics.Gauge(label: "mueval_connection_budget", dimensions: [], factory: factory)
        reportsWaiting = Metrics.Gauge(label: "mueval_reports_queued", dimensions: [], factory: factory)
        reportsWriting = Metrics.Gauge(label: "mueval_reports_writing", dimensions: [], factory: factory)
        sharedSyncs = Metrics.Counter(label: "mueval_shared_syncs_total", dimensions: [], factory: factory)
        sharedSyncFailures = Metrics.Counter(label: "mueval_shared_sync_failures_total", dimensions: [], factory: factory)
        func kind(_ name: String, _ value: @escaping @Sendable (DescriptorStatus) -> Int) -> (metric: Metrics.Gauge, value: @Sendable (DescriptorStatus) -> Int) {
            (Metrics.Gauge(label: "mueval_connections", dimensions: [("kind", name)], factory: factory), value)
        }
        connectionsByKind = [
            kind("capture_device", \.captureDevices), kind("capture_pending", \.capturePending),
            kind("console_http", \.consoleHTTP), kind("console_pending", \.consolePending),
            kind("console_websocket", \.consoleWebSockets), kind("control", \.control),
        ]
        refusals = RefusalReason.allCases.map {
            (Metrics.Counter(label: "mueval_refusals_total", dimensions: [("reason", $0.rawValue)], factory: factory), $0.rawValue)
        }
        budgetCounters = [
            (Metrics.Counter(label: "mueval_connections_budget_refused_total", dimensions: [], factory: factory), \.refused),
            (Metrics.Counter(label: "mueval_connections_evicted_total", dimensions: [], factory: factory), \.evicted),
            (Metrics.Counter(label: "mueval_connections_timed_out_total", dimensions: [], factory: factory), \.timedOut),
        ]
    }

    /// The exposition text for the state `status` describes now.
    func scrape(_ status: StatusReport) -> [UInt8] {
        let now = status.counters
        let before = previous.withLockedValue { previous in
            defer { previous = now }
            return previous
        }
        for counter in counters {
            let growth = counter.value(now) - counter.value(before)
            if growth > 0 { counter.metric.increment(by: growth) }
        }
        for refusal in refusals {
            let growth = now.refusals[refusal.reason, default: 0] - before.refusals[refusal.reason, default: 0]
            if growth > 0 { refusal.metric.increment(by: growth) }
        }
        connectionsOpen.record(now.connectionsOpen)
        sessionsOpen.record(status.sessions.count)
        sessionsRecording.record(status.sessions.filter { $0.state == .recording }.count)
        followers.record(status.tails)
        storageFailing.record(status.storageProblem == nil ? 0 : 1)
        if let replication = status.replication {
            replicationUp.record(replication.state == "replicating" ? 1 : 0)
            replicationPending.record(replication.pendingEvents)
            replicationLag.record(replication.lagSeconds ?? 0)
        }
        if let reports = status.reports {
            reportsWaiting.record(reports.waiting)
            reportsWriting.record(reports.writing)
        }
        if let sync = status.sharedSync {
            let before = previousSync.withLockedValue { previous in
                defer { previous = sync }
                return previous
            }
            if sync.syncs > before.syncs { sharedSyncs.increment(by: sync.syncs - before.syncs) }
            if sync.failures > before.failures { sharedSyncFailures.increment(by: sync.failures - before.failures) }
        }
        if let descriptors = status.descriptors {
            let before = previousBudget.withLockedValue { previous in
                defer { previous = descriptors }
                return previous
            }
            descriptorsOpen.record(descriptors.open)
            descriptorsLimit.record(descriptors.limit)
            connectionBudget.record(descriptors.connectionLimit)
            for kind in connectionsByKind { kind.metric.record(kind.value(descriptors)) }
            for counter in budgetCounters {
                let growth = counter.value(descriptors) - (before.map(counter.value) ?? 0)
                if growth > 0 { counter.metric.increment(by: growth) }
            }
        }
        return registry.emitToBuffer()
    }
}
