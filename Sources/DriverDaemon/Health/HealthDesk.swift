import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import ServiceLifecycle
import Synchronization

/// The unit's health for the office: `agent.health` (through `AgentRuntime`), the report to the backend and the
/// metrics file for node_exporter. Looks once a minute; queues a report when something a technician would care about
/// changed (the store's condition, the GPS, the certificate, a restart, a dead letter, an old queue, a version), and at
/// least every `health.report_minutes` on shift (every 4 hours off shift). A report is a low-priority outbox item: it
/// rides the next batch, never a burst of its own, and a newer one replaces one not sent yet.
final class HealthDesk: Sendable {
    struct Settings: Sendable {
        /// On shift, a report at least this often (seconds).
        var interval: Double
        /// Off shift (the overnight keepalive's cadence).
        var offShiftInterval = 4 * 3600.0
        /// How often the desk looks (seconds).
        var lookEvery = 60.0
        /// node_exporter's textfile (empty: none).
        var textfile: String
        var stateDirectory: String
    }

    /// Where each part of the report comes from: each owner's own reading.
    struct Readings: Sendable {
        var gps: @Sendable () -> GPSStatus
        var onShift: @Sendable () -> Bool
        var clock: @Sendable () -> ClockStatus
        var identity: @Sendable () -> UnitIdentityStatus?
        var vehicle: @Sendable () -> VehicleStatus?
        var frontEnds: @Sendable () -> Int
        var remoteConfigVersion: @Sendable () -> Int?
        var kioskVersion: @Sendable () -> String?
        /// Why this run is stopping, asked at a graceful stop.
        var stopCause: @Sendable () -> UnitHealth.RestartCause
    }

    private struct State {
        var lastQueued: (signature: Signature, at: Double, reportId: String)?
        /// Log counts taken for reports not yet acknowledged: carried into the next one until one is.
        var carriedCounts: [String: Int] = [:]
        var lastTextfile: String?
        /// The start time the metrics file says (`HealthMetrics.startTime`).
        var textfileStartTime: Double?
    }

    /// What makes a new report worth sending before its time: what is wrong (the rules' findings, as the office would
    /// read them), and the states and versions a technician looks up.
    struct Signature: Equatable {
        var findings: Set<HealthFinding.Rule>
        var store: StoreStatus.Condition
        var canSave: Bool
        var gps: GPSLinkState
        var onShift: Bool
        var certificate: UnitIdentityStatus.State?
        var vehicle: String?
        var restarts: Int
        var deadLetters: Int
        var remoteConfigVersion: Int?
        var versions: String

        init(_ health: UnitHealth) {
            findings = Set(HealthRules.findings(health, now: health.generatedAt).map(\.rule))
            store = health.store.condition
            canSave = health.store.canSave
            gps = health.gps.link
            onShift = health.onShift
            certificate = health.certificate?.state
            vehicle = health.vehicle?.link
            restarts = health.restarts.count
            deadLetters = health.queue.deadLetters
            remoteConfigVersion = health.remoteConfigVersion
            versions = health.daemonVersion + "/" + (health.kioskVersion ?? "-")
        }
    }

    let settings: Settings
    private let readings: Readings
    private let outbox: Outbox
    private let recentWarnings: RecentWarnings
    private let clock: DaemonClock
    private let logger: Logger
    private let runLog: RunLog
    private let restarts: [UnitHealth.Restart]
    private let bootId: String?
    private let started: Double
    private let state = Mutex(State())
    private let wakeup: Wakeup

    init(settings: Settings, readings: Readings, outbox: Outbox, recentWarnings: RecentWarnings, clock: DaemonClock, updated: Bool, logger: Logger) {
        self.settings = settings
        self.readings = readings
        self.outbox = outbox
        self.recentWarnings = recentWarnings
        self.clock = clock
        self.logger = logger
        wakeup = clock.wakeup()
        started = clock.monotonic
        let runLog = RunLog(stateDirectory: settings.stateDirectory), bootId = RunLog.bootId()
        self.runLog = runLog
        self.bootId = bootId
        restarts = logger.valueOrLog("recording this run's start (the health report's restarts)") {
            try runLog.begin(now: clock.now().time, bootId: bootId, updated: updated)
        } ?? []
    }

    // MARK: The report

    /// The unit's health now, with the log counts not yet reported (`taking`: and the counting starts again).
    func health(taking: Bool = false) -> UnitHealth {
        let now = clock.now()
        let gps = readings.gps()
        let store = outbox.store.health.check()
        let depth = logger.valueOrLog("reading the queue for the health report") { try outbox.depth() }
        let counts = taking ? recentWarnings.takeCounts() : recentWarnings.counts
        let logCounts = state.withLock { state in
            state.carriedCounts.merge(counts) { $0 + $1 }
            return taking ? state.carriedCounts : state.carriedCounts.merging(counts) { $0 + $1 }
        }
        let identity = readings.identity()
        let onShift = readings.onShift()
        return UnitHealth(
            generatedAt: now.time, timeSource: now.source, daemonVersion: DaemonVersion.current, kioskVersion: readings.kioskVersion(),
            bootId: bootId, uptimeSeconds: (clock.monotonic - started).rounded(), onShift: onShift, restarts: restarts, store: store,
            queue: UnitHealth.Queue(
                items: depth?.items ?? 0, pings: depth?.pings ?? 0, deadLetters: depth?.dead ?? 0,
                oldestAgeSeconds: depth?.oldestPending.map { max(0, now.time - $0).rounded() }),
            gps: UnitHealth.GPS(link: gps.link, lastFixAgeSeconds: gps.lastFixAge.map { $0.rounded() }),
            clockSource: readings.clock().source,
            certificate: identity.map { UnitHealth.Certificate(state: $0.state, notAfter: $0.notAfter, reason: $0.reason) },
            vehicle: readings.vehicle().flatMap { vehicle in vehicle.adapter.map { _ in UnitHealth.Vehicle(link: vehicle.link.rawValue, batteryVolts: vehicle.voltage) } },
            frontEnds: readings.frontEnds(), remoteConfigVersion: readings.remoteConfigVersion(), logCounts: logCounts,
            peakRSSKiB: Self.peakRSSKiB(), nextReportWithin: (onShift ? settings.interval : settings.offShiftInterval) + settings.lookEvery)
    }

    /// `agent.health`: the health and what is wrong with it, worst first (the unit's own view: it cannot be silent to itself).
    func agentHealth() -> AgentHealth {
        let health = health()
        return AgentHealth(health: health, findings: HealthRules.findings(health, now: health.generatedAt))
    }

    /// Queues a report when something changed or one is due; writes the metrics file when it changed.
    func look() {
        let health = health()
        let signature = Signature(health)
        let now = clock.monotonic
        let due = state.withLock { state -> Bool in
            guard let last = state.lastQueued else { return true }
            let interval = health.onShift ? settings.interval : settings.offShiftInterval
            return last.signature != signature || now - last.at >= interval
        }
        if due { queue(signature: signature, at: now) }
        writeTextfile(health)
    }

    private func queue(signature: Signature, at now: Double) {
        let health = health(taking: true)
        let report = UnitHealthReport(reportId: RandomID.uuid(), health: health)
        do {
            let item = OutboxItemRecord(
                kind: .health, taskId: TaskRecord.healthLane, idempotencyKey: report.reportId, payload: Data(try Codec.encode(report)),
                createdAt: health.generatedAt)
            try outbox.enqueueReplacing(item)
            state.withLock { $0.lastQueued = (signature, now, report.reportId) }
        } catch {
            // Tried again at the next look (its counts stay carried).
            logger.error("cannot queue the health report: \(Store.describeWriteFailure(error))")
        }
    }

    /// The backend has a report: the log counts it carried are reported.
    private func acknowledged(_ item: OutboxItemRecord) {
        state.withLock { state in
            if state.lastQueued?.reportId == item.idempotencyKey { state.carriedCounts = [:] }
        }
    }

    // MARK: The metrics file

    /// Written whole under a temporary name and renamed (node_exporter never reads half a file), not synced (the next
    /// minute writes it again), and only when its text changed.
    private func writeTextfile(_ health: UnitHealth) {
        guard !settings.textfile.isEmpty else { return }
        let startTime = state.withLock { state in
            let startTime = HealthMetrics.startTime(health, said: state.textfileStartTime)
            state.textfileStartTime = startTime
            return startTime
        }
        let text = HealthMetrics.text(health, startTime: startTime)
        guard state.withLock({ $0.lastTextfile != text }) else { return }
        do {
            try DurableFile.replaceUnsynced(Data(text.utf8), at: settings.textfile)
            state.withLock { $0.lastTextfile = text }
        } catch {
            logger.error("cannot write the metrics file \(settings.textfile): \(error)")
        }
    }

    // MARK: Running

    /// Looks every minute (and at once at start) until the graceful stop, which records why this run ends.
    func run() async {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                look()
                await wakeup.wait(until: clock.monotonic + settings.lookEvery)
            }
        }
        _ = logger.valueOrLog("recording this run's clean stop") { try runLog.end(readings.stopCause()) }
    }

    func stop() { wakeup.signal() }

    static func peakRSSKiB() -> Int? {
        guard let status = try? DurableFile.read("/proc/self/status", offset: 0, count: 1 << 14) else { return nil }  // no /proc: unknown
        let line = String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
    }
}

/// The desk owns the health lane: its reports go with the next batch, and their acknowledgement ends the counts carried.
extension HealthDesk {
    func attach(to uplink: Uplink) {
        uplink.register(.health, OutboxKindHandler(send: { item, client, token in
            _ = try await client.postHealthReport(body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            return nil
        }, acknowledged: { [self] item, _ in acknowledged(item) }))
    }
}

struct HealthService: Service {
    let desk: HealthDesk

    func run() async { await desk.run() }
}
