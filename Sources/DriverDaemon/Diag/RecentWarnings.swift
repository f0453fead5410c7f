import DriverAPI
import Synchronization

/// The daemon's last warnings and errors, kept in memory for `diag.report`: a support engineer on the phone
/// should not need journal access to see what went wrong lately.
public final class RecentWarnings: Sendable {
    private struct State {
        var records: [LogRecord] = []
        var total = 0
        /// Counted by MESSAGE_ID ("-" for none) since the health report last took them.
        var counts: [String: Int] = [:]
    }

    private let state = Mutex(State())
    private let capacity: Int

    public init(capacity: Int = DiagReport.warningsKept) { self.capacity = capacity }

    func record(_ record: LogRecord) {
        state.withLock { state in
            state.total += 1
            state.counts[record.messageID ?? "-", default: 0] += 1
            if state.records.count == capacity { state.records.removeFirst() }
            state.records.append(record)
        }
    }

    /// Warnings and errors by MESSAGE_ID since the last call (the health report's), and the counting starts again.
    public func takeCounts() -> [String: Int] {
        state.withLock { state in
            defer { state.counts = [:] }
            return state.counts
        }
    }

    /// The counts so far, without taking them (`agent.health`).
    public var counts: [String: Int] { state.withLock { $0.counts } }

    /// Oldest first, and how many were logged in all.
    public var snapshot: (records: [LogRecord], total: Int) {
        state.withLock { ($0.records, $0.total) }
    }
}
