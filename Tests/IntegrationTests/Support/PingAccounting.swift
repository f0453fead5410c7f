import DispatchSimCore
import Foundation

/// Which pings a run lost, from the daemons' own words: each ping recorded is a debug line (`ping recorded
/// fix_time=… monotonic=… motion=…`), and the backend lists what it got. A ping may be lost only when its daemon
/// ended without a graceful stop (a `kill -9`, a power cut) within the commit window after recording it: in memory
/// until the backend takes it or the window ends, then on disk.
enum PingAccounting {
    /// The daemon's default windows (moving: the batch interval and a 2-s grace for the answer; standing:
    /// `PingRecorder.parkedWindow`), and slack for scheduling.
    static let movingWindow = 7.0, stationaryWindow = 120.0, slack = 1.5

    struct Life {
        var log: String
        /// When the daemon was killed (CLOCK_BOOTTIME seconds); nil: it stopped gracefully, nothing may be lost.
        var endedAt: Double?
    }

    struct Outcome {
        var recorded = 0
        var lost = 0
        /// Pings lost at each kill or cut.
        var lostPerEnd: [Int] = []
        /// Lost pings the promise does not allow.
        var outsideWindow: [String] = []
    }

    static func account(_ lives: [Life], received: DriverLocations) -> Outcome {
        let times = Set(received.pings.map { ($0.timestamp * 1000).rounded() })
        var outcome = Outcome()
        for life in lives {
            var lost = 0
            for line in life.log.split(separator: "\n") where line.contains("ping recorded") {
                guard let fixTime = field(line, "fix_time").flatMap(Double.init), let at = field(line, "monotonic").flatMap(Double.init),
                      let motion = field(line, "motion")
                else { continue }
                outcome.recorded += 1
                guard !times.contains((fixTime * 1000).rounded()) else { continue }
                lost += 1
                let window = motion == "moving" ? movingWindow : stationaryWindow
                if let end = life.endedAt, end - at > window + slack {
                    outcome.outsideWindow.append("fix \(fixTime) (\(motion)) recorded \(end - at) s before its daemon was killed")
                } else if life.endedAt == nil {
                    outcome.outsideWindow.append("fix \(fixTime) (\(motion)) lost without a kill")
                }
            }
            outcome.lost += lost
            if life.endedAt != nil { outcome.lostPerEnd.append(lost) }
        }
        return outcome
    }

    private static func field(_ line: Substring, _ key: String) -> String? {
        guard let range = line.range(of: " \(key)=") else { return nil }
        return String(line[range.upperBound...].prefix { $0 != " " })
    }

    static func monotonic() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
