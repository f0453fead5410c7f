import DriverAPI
import Synchronization

/// The daemon's last warnings and errors, kept in memory for `diag.report`: a support engineer on the phone
/// should not need journal access to see what went wrong lately.
public final class RecentWarnings: Sendable {
    private struct State {
        var records: [LogRecord] = []
        var total = 0
    }

    private let state = Mutex(State())
    private let capacity: Int

    public init(capacity: Int = DiagReport.warningsKept) { self.capacity = capacity }

    func record(_ record: LogRecord) {
        state.withLock { state in
            state.total += 1
            if state.records.count == capacity { state.records.removeFirst() }
            state.records.append(record)
        }
    }

    /// Oldest first, and how many were logged in all.
    public var snapshot: (records: [LogRecord], total: Int) {
        state.withLock { ($0.records, $0.total) }
    }
}
