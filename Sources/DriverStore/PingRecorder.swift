import DriverAPI
import DriverDomain
import ReaderThread
import SQLiteKit
import Synchronization

/// Pings between the GPS and the backend. A ping is kept in memory first; it must be acknowledged by the backend
/// or on disk (committed and synced) within its commit window, so a power cut loses at most the pings of the last
/// window. Pings the uplink delivers in time never touch the flash (what units that keep records in RAM while
/// online do); the rest are written in one transaction per window (group commit).
///
/// The caller says when the next sample is due; when that is past the window of the oldest ping the batch is
/// written at once, so a slow (stationary) rate costs no extra wake-up for a timer.
public final class PingRecorder: Sendable {
    /// A ping not on disk, with the monotonic time it was recorded, when it must be on disk (its window's end),
    /// and the batch it went out in (kept if the send failed: the backend may have it, so it goes again as the same
    /// batch).
    private struct Held {
        var ping: PingRecord
        var at: Double
        var due: Double
        var batchId: String?
    }

    private struct State {
        var held: [Held] = []
        /// The earliest `due` of `held`: the reader asks at every wake-up (thousands a second while a backlog
        /// replays), so it is kept as pings come, and found again only when some leave.
        var earliestDue: Double?
        /// The batches of held pings the uplink is sending now (one request), and those whose window ran out first (their
        /// rows go when the answer comes).
        var sending: Set<String> = []
        var sendingWritten: Set<String> = []
        /// Pings taken for a write that has not finished: still pending to anyone asking.
        var writing = 0
        /// Pings on disk or delivered since start.
        var committed = 0
        var delivered = 0
        var keptByMotion: [String: Int] = [:]
        var lastError: String?
        /// After a write failed: the monotonic time of the next try and the failures in a row (a backoff from 1 s to
        /// 30 s). Every deadline waits for it: held pings past their window must not make the reader try again at once.
        var retryAt: Double?
        var failures = 0
        /// Pings given up because memory held `maxHeld` while the store could not take them (oldest first).
        var droppedHeld = 0
        /// Commits since the retention caps were last applied.
        var sinceRetention = Int.max
        /// Upkeep asked for and not begun: a fold, and the retention caps too; and whether its thread runs.
        var foldAsked = false
        var retentionAsked = false
        var upkeepRunning = false
        /// The odometer's state not written yet, and when it changed first (monotonic).
        var travel: (record: TravelRecord, since: Double)?
        var lastTravelWritten: TravelRecord?
    }

    private let store: Store
    /// The window of a ping recorded while moving and while stationary, seconds.
    public let movingWindow: Double
    public let stationaryWindow: Double
    private let retention: RetentionPolicy?
    private let onRetention: (@Sendable (RetentionResult) -> Void)?
    private let state = Mutex(State())
    /// The caps are checked after the first commit and then every this many pings.
    static let retentionInterval = 1000
    /// The log is folded into the database once it holds this many pings (about 8 minutes at 1 Hz), in one transaction.
    static let foldPings = 500
    /// The most pings held in memory while the store cannot take them (about 10 hours at 1 Hz, a few MB): past it the
    /// oldest go first, as the retention rules thin the oldest on disk.
    static let maxHeld = 36_000
    /// The wait before the first retry of a failed write, and the longest (seconds).
    static let retryBase = 1.0
    static let retryCap = 30.0
    /// The shortest wait `commitIfDue` returns: no caller may loop on a wait of zero.
    static let minimumWait = 0.1

    /// How long a batch's answer may take before its pings are written anyway (beyond the uplink's interval).
    public static let answerGrace = 2.0
    /// How long a standing vehicle's pings may wait for the disk when the backend does not take them. They repeat
    /// one place, and writing them at the batch interval (every second sample at 0.1 Hz) was 9 of a parked unit's
    /// 15 wake-ups a minute offline (an `fdatasync` blocks about three times) and most of its flash writes. A power
    /// cut loses at most the last two minutes of a van standing where the first fix after the cut shows it.
    public static let parkedWindow = 120.0
    /// The odometer's state alone is written at most this often (seconds): a power cut may lose this much driving
    /// from the odometer while the pings themselves go straight to the backend.
    public static let travelWindow = 30.0

    /// - Parameters: `movingWindow`, `stationaryWindow`: how long a ping may wait in memory for the backend's
    ///   answer (the uplink's batch interval and a grace for the answer): what a kill or a power cut may lose.
    public init(
        store: Store, movingWindow: Double = 5, stationaryWindow: Double = 5, retention: RetentionPolicy? = nil,
        onRetention: (@Sendable (RetentionResult) -> Void)? = nil
    ) {
        self.store = store
        self.movingWindow = movingWindow
        self.stationaryWindow = stationaryWindow
        self.retention = retention
        self.onRetention = onRetention
    }

    /// Pings kept since start: on disk, or delivered to the backend from memory.
    public var kept: Int { state.withLock { $0.committed + $0.delivered } }
    /// Of those, the ones that never had to be written.
    public var delivered: Int { state.withLock { $0.delivered } }
    public var keptByMotion: [String: Int] { state.withLock { $0.keptByMotion } }
    /// Pings in memory (not yet acknowledged, not yet on disk).
    public var pendingCount: Int { state.withLock { $0.held.count + $0.writing } }
    public var lastError: String? { state.withLock { $0.lastError } }
    /// Pings given up while the store could not take them and memory was full.
    public var droppedHeld: Int { state.withLock { $0.droppedHeld } }
    /// When the next try of a failed write comes (monotonic), nil while writes succeed.
    public var retryAt: Double? { state.withLock { $0.retryAt } }

    private func window(_ ping: PingRecord) -> Double { ping.motion == Motion.moving.rawValue ? movingWindow : stationaryWindow }

    /// Keeps `ping` and writes what would otherwise pass its window before the next sample comes (so a slow,
    /// stationary rate writes without a timer). `now` is monotonic seconds (a deadline must not move with the wall
    /// clock). Returns whether it wrote.
    @discardableResult
    public func append(_ ping: PingRecord, now: Double, nextSampleIn: Double) -> Bool {
        let due = state.withLock { state -> Bool in
            let deadline = now + window(ping)
            state.held.append(Held(ping: ping, at: now, due: deadline))
            state.earliestDue = min(state.earliestDue ?? deadline, deadline)
            if state.held.count > Self.maxHeld, let oldest = state.held.firstIndex(where: { held in held.batchId.map { !state.sending.contains($0) } ?? true }) {
                state.held.remove(at: oldest)
                state.droppedHeld += 1
                state.earliestDue = state.held.map(\.due).min()
            }
            return Self.firstDeadline(state).map { $0 < now + nextSampleIn } ?? false
        }
        if due { commit(before: now + nextSampleIn, now: now) }
        return due
    }

    /// The earliest time something held must be on disk: a ping's window, or the odometer's.
    private static func firstDeadline(_ state: State) -> Double? {
        var first = state.travel.map { $0.since + travelWindow }
        if let due = state.earliestDue { first = min(first ?? due, due) }
        // After a failed write nothing is due before the retry.
        if let first, let retryAt = state.retryAt { return max(first, retryAt) }
        return first
    }

    /// Writes what is due by `now`. Returns the seconds left until the next deadline (nil: nothing held), never less
    /// than `minimumWait`: after a failed write the next deadline is the retry's, on a backoff.
    public func commitIfDue(now: Double) -> Double? {
        guard let deadline = state.withLock({ Self.firstDeadline($0) }) else { return nil }
        guard deadline > now else {
            commit(before: now, now: now)
            return state.withLock { Self.firstDeadline($0) }.map { max(Self.minimumWait, $0 - now) }
        }
        return max(Self.minimumWait, deadline - now)
    }

    /// The odometer's state, written with the next commit of pings, or alone once it has waited `travelWindow`. A
    /// state whose counts are those on disk waits for the next write without asking for one (a parked unit's fixes
    /// move only the anchor, and a restart bridges from an older anchor just as well).
    public func noteTravel(_ record: TravelRecord, now: Double) {
        state.withLock { state in
            let unchanged = state.travel == nil && state.lastTravelWritten.map { record.sameCounts(as: $0) } == true
            state.travel = unchanged ? nil : (record, state.travel?.since ?? now)
        }
    }

    // MARK: Sending from memory

    /// Held pings for the uplink as one request: the batches that were sent and not acknowledged first (older first),
    /// unchanged, then the pings in no batch yet as a new one, at most `maxPings` in all. Not `carrying` (a backend that
    /// takes one batch a request): the oldest unacknowledged batch alone, else a new one. Empty when nothing is held or
    /// a request is on its way.
    public func claimBatches(maxPings: Int, carrying: Bool, newBatchId: () -> String) -> [Outbox.PingBatch] {
        state.withLock { state in
            guard state.sending.isEmpty, !state.held.isEmpty else { return [] }
            var order: [String] = []
            var pings: [String: [PingRecord]] = [:]
            var fresh: [Int] = []
            for (index, held) in state.held.enumerated() {
                guard let batchId = held.batchId else {
                    fresh.append(index)
                    continue
                }
                var ping = held.ping
                ping.batchId = batchId
                if pings[batchId] == nil { order.append(batchId) }
                pings[batchId, default: []].append(ping)
            }
            var batches: [Outbox.PingBatch] = []
            var count = 0
            for batchId in order {
                let batch = pings[batchId] ?? []
                guard batches.isEmpty || carrying && count + batch.count <= maxPings else { break }
                batches.append(Outbox.PingBatch(batchId: batchId, pings: batch))
                count += batch.count
            }
            if batches.isEmpty || carrying, count < maxPings, !fresh.isEmpty {
                let batchId = newBatchId()
                var batch: [PingRecord] = []
                for index in fresh.prefix(maxPings - count) {
                    state.held[index].batchId = batchId
                    var ping = state.held[index].ping
                    ping.batchId = batchId
                    batch.append(ping)
                }
                batches.append(Outbox.PingBatch(batchId: batchId, pings: batch))
            }
            state.sending = Set(batches.map(\.batchId))
            return batches
        }
    }

    /// The answer to the request of `claimBatches` came, or it failed (`acknowledged` empty): the acknowledged batches'
    /// pings are done (on disk only if their window ran out first, and then deleted there); the rest stay, to go again
    /// under their ids (from memory, or from the disk once written).
    public func sent(acknowledged: Set<String>) {
        let written = state.withLock { state -> [String] in
            let acked = state.sending.intersection(acknowledged)
            defer { (state.sending, state.sendingWritten) = ([], []) }
            let done = state.held.filter { $0.batchId.map(acked.contains) == true }
            state.held.removeAll { $0.batchId.map(acked.contains) == true }
            state.earliestDue = state.held.map(\.due).min()
            state.delivered += done.count
            for held in done { state.keptByMotion[held.ping.motion, default: 0] += 1 }
            return state.sendingWritten.intersection(acked).sorted()
        }
        // Written meanwhile (an answer slower than the window): the rows go now. A write still under way holds
        // the writer, so this delete comes after it.
        // Not deleted (a write failure): the rows go again as the same batch, which the backend stores once.
        for batchId in written {
            do {
                try Outbox(store: store).ackPingBatch(batchId)
            } catch {
                state.withLock { $0.lastError = Store.describeWriteFailure(error) }
            }
        }
    }

    // MARK: Writing

    /// Writes and syncs everything held (when the link goes, at shutdown). On failure the pings stay held.
    public func flush() { commit(pings: { _ in true }, travelDue: { _ in true }, travelRides: { _ in true }, now: monotonicSeconds(), asked: true) }

    /// Writes everything held and folds the log into the database: a graceful stop leaves every ping there.
    public func flushIntoStore() {
        flush()
        do { try store.foldPingLog() } catch { state.withLock { $0.lastError = Store.describeWriteFailure(error) } }
    }

    /// When a ping's window ends before `deadline`, writes every held ping (a group commit: the ones after it would
    /// be due soon), and the odometer's state when its window ends too, or when it has waited half of it and pings are
    /// written anyway (it rides along instead of costing a write of its own). When only the odometer is due, it alone.
    private func commit(before deadline: Double, now: Double) {
        let pingDue = state.withLock { state in state.held.contains { $0.due <= deadline } }
        commit(
            pings: { _ in pingDue }, travelDue: { $0 + Self.travelWindow <= deadline }, travelRides: { $0 + Self.travelWindow / 2 <= deadline },
            now: now, asked: false)
    }

    /// Writes and syncs what the conditions pick (the rest of a picked ping's batch too: a batch is sent whole, so it
    /// is stored whole).
    ///
    /// Synchronous on purpose: it runs on the GPS reader's thread, where waiting for the disk delays nothing else,
    /// and hopping to another thread would cost more wake-ups than the write itself.
    ///
    /// After a failure the next try waits for `retryAt` (`asked`, a flush at the link's loss or a stop, tries at once);
    /// while the store cannot take pings (full, read-only, or its reserve in use for the driver's changes) the try is a
    /// look at the file system, not a write, and the pings stay in memory, where the uplink still sends them.
    private func commit(pings due: (Held) -> Bool, travelDue: (Double) -> Bool, travelRides: (Double) -> Bool, now: Double, asked: Bool) {
        if !asked, let retryAt = state.withLock({ $0.retryAt }), retryAt > now { return }
        let health = store.health
        if !health.mayWriteBulk {
            health.check()
            // A failing disk tells only by a write: tried on the backoff. Full or read-only: no write until it has room.
            if !health.mayWriteBulk, health.status.condition != .failing {
                state.withLock { state in
                    backOff(&state, now: now)
                    state.lastError = "pings wait in memory: storage \(health.status.summary)"
                }
                return
            }
        }
        let (batch, travel) = state.withLock { state -> ([Held], TravelRecord?) in
            let batches = Set(state.held.filter(due).compactMap(\.batchId))
            let picked = { (held: Held) in due(held) || held.batchId.map(batches.contains) == true }
            let pings = state.held.filter(picked)
            state.held.removeAll(where: picked)
            state.earliestDue = state.held.map(\.due).min()
            state.writing += pings.count
            state.sendingWritten.formUnion(state.sending.intersection(batches))
            guard let travel = state.travel, travelDue(travel.since) || (!pings.isEmpty && travelRides(travel.since)) else { return (pings, nil) }
            state.travel = nil
            return (pings, travel.record)
        }
        guard !batch.isEmpty || travel != nil else { return }
        do {
            try store.logPings(batch.map { held in
                var ping = held.ping
                ping.batchId = held.batchId
                return ping
            }, travel: travel)
        } catch {
            // Kept for the next attempt (a full disk recovers when space returns).
            state.withLock { state in
                state.writing -= batch.count
                state.held = (batch + state.held).sorted { $0.at < $1.at }
                state.earliestDue = state.held.map(\.due).min()
                if let travel, state.travel == nil { state.travel = (travel, 0) }
                state.sendingWritten.subtract(batch.compactMap(\.batchId))
                state.lastError = Store.describeWriteFailure(error)
                backOff(&state, now: now)
            }
            return
        }
        let checkRetention = state.withLock { state -> Bool in
            state.writing -= batch.count
            state.committed += batch.count
            for held in batch { state.keptByMotion[held.ping.motion, default: 0] += 1 }
            if let travel { state.lastTravelWritten = travel }
            state.lastError = nil
            (state.retryAt, state.failures) = (nil, 0)
            state.sinceRetention = state.sinceRetention == Int.max ? Int.max : state.sinceRetention + batch.count
            guard state.sinceRetention >= Self.retentionInterval else { return false }
            state.sinceRetention = 0
            return true
        }
        // A long time without the backend: the log goes into the database in bulk, where the caps apply. On a thread
        // of its own: both wait for the database's one writer, and this thread's next group commit must not wait
        // with them (it did, and a power-cut soak lost pings older than their window).
        guard checkRetention || store.loggedPings >= Self.foldPings else { return }
        let start = state.withLock { state -> Bool in
            state.foldAsked = true
            state.retentionAsked = state.retentionAsked || checkRetention
            defer { state.upkeepRunning = true }
            return !state.upkeepRunning
        }
        if start { startThread(named: "ping-upkeep") { self.upkeep() } }
    }

    /// The next try after a failure: 1 s, doubling to 30 s, with a tenth of jitter (many writers must not retry together).
    private func backOff(_ state: inout State, now: Double) {
        state.failures += 1
        let delay = min(Self.retryCap, Self.retryBase * Double(1 << min(state.failures - 1, 16)))
        state.retryAt = now + delay * Double.random(in: 0.9...1.0)
    }

    /// Folds the log and applies the caps, as asked, until nothing more is asked.
    private func upkeep() {
        while let retentionDue = state.withLock({ state -> Bool? in
            guard state.foldAsked else {
                state.upkeepRunning = false
                return nil
            }
            defer { (state.foldAsked, state.retentionAsked) = (false, false) }
            return state.retentionAsked
        }) {
            do {
                try store.foldPingLog()
            } catch {
                state.withLock { $0.lastError = Store.describeWriteFailure(error) }
                continue
            }
            guard retentionDue, let retention else { continue }
            do {
                let result = try Outbox(store: store).applyRetention(retention)
                if !result.isEmpty { onRetention?(result) }
            } catch {
                state.withLock { $0.lastError = Store.describeWriteFailure(error) }
            }
        }
    }
}
