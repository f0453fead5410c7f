import Foundation

/// CPU time, wake-ups and peak RSS of a process, from /proc (all threads summed), and the wake-ups of each thread by
/// name (threads of one name summed: the concurrency pool's workers are one line). A wake-up is a voluntary context
/// switch: the thread slept (a poll, a timer, a disk wait) and was woken. Involuntary ones are preemptions of a
/// thread that was running anyway, and count the machine's other load, not the daemon's.
struct ProcessSample {
    var cpuSeconds: Double
    var wakeUps: Int
    var peakRSSKiB: Int
    var switchesByThread: [String: Int] = [:]

    /// Nil when the process is gone (its caller says so); a thread that ends between the listing and its status
    /// is the expected try? below, and counts for nothing.
    static func read(pid: Int32) -> ProcessSample? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after "comm": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var switches = 0
        var byThread: [String: Int] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            var name = "?"
            for line in status.split(separator: "\n") {
                if line.hasPrefix("Name:") { name = line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
                guard line.hasPrefix("voluntary_ctxt_switches:") else { continue }
                let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
                switches += count
                byThread[name, default: 0] += count
            }
        }
        var peak = 0
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) {
            peak = Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return ProcessSample(cpuSeconds: (utime + stime) / ticks, wakeUps: switches, peakRSSKiB: peak, switchesByThread: byThread)
    }

    /// Wake-ups per minute of each thread between two samples, busiest first ("gpsd-reader 6.0, obd-reader 1.3").
    static func threadRates(from start: ProcessSample, to end: ProcessSample, minutes: Double) -> String {
        end.switchesByThread
            .map { ($0.key, Double($0.value - (start.switchesByThread[$0.key] ?? 0)) / minutes) }
            .filter { $0.1 > 0 }
            .sorted { $0.1 > $1.1 }
            .map { "\($0.0) \(String(format: "%.1f", $0.1))" }
            .joined(separator: ", ")
    }
}
