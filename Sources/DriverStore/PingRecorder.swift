import DriverDomain
import SQLiteKit
import Synchronization

/// Group commit of pings: buffered in memory, written in one transaction at least every `maxDelay` seconds.
///
/// The caller says when the next sample is due; when that is later than the commit deadline the batch is
/// written at once, so a slow (stationary) rate costs no extra wake-up for a timer.
public final class PingRecorder: Sendable {
    private struct State {
        var pending: [PingRecord] = []
        /// Pings taken for a write that has not finished: still pending to anyone asking.
        var writing = 0
        var oldestPendingAt: Double?
        var committed = 0
        var committedByMotion: [String: Int] = [:]
        var lastError: String?
        /// Commits since the retention caps were last applied.
        var sinceRetention = Int.max
    }

    private let store: Store
    public let maxDelay: Double
    private let retention: RetentionPolicy?
    private let onRetention: (@Sendable (RetentionResult) -> Void)?
    private let state = Mutex(State())
    /// The odometer's latest state, written with the next batch (nil: unchanged since the last).
    private let travel = Mutex<TravelRecord?>(nil)
    /// The caps are checked after the first commit and then every this many pings.
    static let retentionInterval = 1000

    public init(
        store: Store, maxDelay: Double = 5, retention: RetentionPolicy? = nil,
        onRetention: (@Sendable (RetentionResult) -> Void)? = nil
    ) {
        self.store = store
        self.maxDelay = maxDelay
        self.retention = retention
        self.onRetention = onRetention
    }

    /// Pings committed since start.
    public var committed: Int { state.withLock { $0.committed } }
    public var committedByMotion: [String: Int] { state.withLock { $0.committedByMotion } }
    public var pendingCount: Int { state.withLock { $0.pending.count + $0.writing } }
    public var lastError: String? { state.withLock { $0.lastError } }

    /// Buffers `ping` and commits the batch when the next sample would arrive past the deadline (so a slow,
    /// stationary rate commits each ping at once, and 1 Hz commits every 5 s, both without a timer). `now` is
    /// monotonic seconds (the deadline must not move with the wall clock). Returns whether it committed.
    @discardableResult
    public func append(_ ping: PingRecord, now: Double, nextSampleIn: Double) -> Bool {
        let due = state.withLock { state -> Bool in
            state.pending.append(ping)
            if state.oldestPendingAt == nil { state.oldestPendingAt = now }
            return now - state.oldestPendingAt! + nextSampleIn > maxDelay
        }
        if due { flush() }
        return due
    }

    /// Commits the pending batch if its deadline has passed. Returns the seconds left until the deadline of
    /// what is still pending (nil: nothing pending).
    public func commitIfDue(now: Double) -> Double? {
        let remaining = state.withLock { state in state.oldestPendingAt.map { $0 + maxDelay - now } }
        guard let remaining else { return nil }
        guard remaining > 0 else {
            flush()
            return nil
        }
        return remaining
    }

    /// The odometer's state to write with the next commit: it moves with every fix, and rides along with the
    /// pings' group commit instead of a write of its own.
    public func noteTravel(_ record: TravelRecord) {
        travel.withLock { $0 = record }
    }

    /// Commits everything pending (also on link loss and shutdown). On failure the rows stay pending.
    ///
    /// Synchronous on purpose: a WAL commit at `synchronous=NORMAL` takes well under a millisecond, and hopping
    /// to another thread would cost more wake-ups than the write itself.
    public func flush() {
        let batch = state.withLock { state -> [PingRecord] in
            defer {
                state.writing += state.pending.count
                state.pending = []
                state.oldestPendingAt = nil
            }
            return state.pending
        }
        let travel = travel.withLock { record in
            defer { record = nil }
            return record
        }
        guard !batch.isEmpty || travel != nil else { return }
        do {
            try store.pool.write { db in
                for ping in batch { try ping.insert(db) }
                try travel?.save(db)
            }
            let checkRetention = state.withLock { state -> Bool in
                state.writing -= batch.count
                state.committed += batch.count
                for ping in batch { state.committedByMotion[ping.motion, default: 0] += 1 }
                state.lastError = nil
                state.sinceRetention = state.sinceRetention == Int.max ? Int.max : state.sinceRetention + batch.count
                guard state.sinceRetention >= Self.retentionInterval else { return false }
                state.sinceRetention = 0
                return true
            }
            if checkRetention, let retention, let result = try? Outbox(store: store).applyRetention(retention), !result.isEmpty {
                onRetention?(result)
            }
        } catch {
            // Keep them for the next attempt (a full disk recovers when space returns).
            if let travel { self.travel.withLock { $0 = $0 ?? travel } }
            state.withLock { state in
                state.writing -= batch.count
                state.pending = batch + state.pending
                state.oldestPendingAt = state.oldestPendingAt ?? 0
                state.lastError = Store.describeWriteFailure(error)
            }
        }
    }
}
