import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC

/// `runs.json` in the state directory: the daemon's runs of the last 24 hours, each with why it ended, as the health
/// report's `restarts`. A run is written when it begins (boot id, start) and again when it stops gracefully (its
/// cause); a run found at the next start without a cause ended without a clean stop: a crash (or systemd's watchdog)
/// when the kernel's boot id is the same, a power cut when it is not. Two small writes a run.
struct RunLog {
    struct Run: Codable, Equatable {
        var startedAt: Double
        var bootId: String?
        var ended: UnitHealth.RestartCause?
    }

    private struct File: Codable {
        var runs: [Run]
    }

    let path: String

    init(stateDirectory: String) { path = stateDirectory + "/runs.json" }

    /// Records this run's start: the previous run's end is judged (`updated`: driverd-update left its outcome, so a
    /// clean stop was for a new release), runs older than a day go. Returns the earlier runs, oldest first.
    func begin(now: Double, bootId: String?, updated: Bool) throws -> [UnitHealth.Restart] {
        var runs = try read()
        if let last = runs.indices.last {
            switch runs[last].ended {
            case nil: runs[last].ended = runs[last].bootId != nil && runs[last].bootId == bootId ? .crash : .powerCut
            case .cleanStop? where updated: runs[last].ended = .update
            default: break
            }
        }
        runs.removeAll { $0.startedAt < now - 86400 }
        let earlier = runs.compactMap { run in run.ended.map { UnitHealth.Restart(startedAt: run.startedAt, cause: $0) } }
        runs.append(Run(startedAt: now, bootId: bootId, ended: nil))
        try write(runs)
        return earlier
    }

    /// This run stops gracefully: its cause is written.
    func end(_ cause: UnitHealth.RestartCause) throws {
        var runs = try read()
        guard let last = runs.indices.last, runs[last].ended == nil else { return }
        runs[last].ended = cause
        try write(runs)
    }

    private func read() throws -> [Run] {
        guard let data = try DurableFile.contents(path) else { return [] }
        return try Codec.decode(File.self, from: data).runs
    }

    private func write(_ runs: [Run]) throws { try DurableFile.write(Data(try Codec.encode(File(runs: runs))), to: path) }

    /// The kernel's id of this boot.
    static func bootId() -> String? {
        guard let data = try? DurableFile.read("/proc/sys/kernel/random/boot_id", offset: 0, count: 64) else { return nil }  // no /proc: no boot id, runs end as power cuts
        let id = String(decoding: data, as: UTF8.self).trimmingWhitespace()
        return id.isEmpty ? nil : id
    }
}
