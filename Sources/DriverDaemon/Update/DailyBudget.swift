import DriverAPI
import DriverStore
import FoundationEssentials
import Synchronization

/// Bytes downloaded on one day, kept across restarts (a daemon restarted every hour must not get a new budget).
struct DailyBudget: Codable, Sendable, Equatable {
    var day = 0
    var bytes = 0

    /// The UTC day number of `time` (the budget is per day; which midnight matters little).
    static func day(of time: Double) -> Int { Int((time / 86400).rounded(.down)) }

    func spent(day: Int) -> Int { day == self.day ? bytes : 0 }

    func allows(_ count: Int, day: Int, max: Int) -> Bool { spent(day: day) + count <= max }

    mutating func spend(_ count: Int, day: Int) {
        if day != self.day {
            self.day = day
            bytes = 0
        }
        bytes += count
    }

    /// None spent when there is no file yet; throws when it cannot be read or decoded.
    static func read(_ path: String) throws -> DailyBudget {
        try DurableFile.contents(path).map { try Codec.decode(DailyBudget.self, from: $0) } ?? DailyBudget()
    }
}

/// The day's download budget as the update desk spends it: the count is written at most every `saveBytes` and when a
/// download stops, not per chunk (flash), so a crash forgets less than that much of the day's bytes.
final class DownloadBudget: Sendable {
    static let saveBytes = 1 << 20
    private let files: UpdateFiles
    private let state: Mutex<(spent: DailyBudget, unsaved: Int)>

    /// Unreadable: a fresh budget for today (logged); the file is written whole again at the next save.
    init(files: UpdateFiles) {
        self.files = files
        let spent = files.logger.valueOrLog("reading the day's download budget") { try DailyBudget.read(files.budget) }
        state = Mutex((spent ?? DailyBudget(), 0))
    }

    func allows(_ count: Int, day: Int, max: Int) -> Bool { state.withLock { $0.spent.allows(count, day: day, max: max) } }

    func spent(day: Int) -> Int { state.withLock { $0.spent.spent(day: day) } }

    func spend(_ count: Int, day: Int) {
        let unsaved = state.withLock { state in
            state.spent.spend(count, day: day)
            state.unsaved += count
            return state.unsaved
        }
        if unsaved >= Self.saveBytes { save() }
    }

    /// Writes the day's count when some of it is not on disk.
    func save() {
        let unsaved = state.withLock { state -> DailyBudget? in
            defer { state.unsaved = 0 }
            return state.unsaved > 0 ? state.spent : nil
        }
        if let unsaved { files.saveBudget(unsaved) }
    }
}
