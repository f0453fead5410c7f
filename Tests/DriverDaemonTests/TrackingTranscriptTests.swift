#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
@testable import DriverDaemon
import DriverDomain
import DriverStore
import Foundation
import GPSKit
import Logging
import Synchronization
import Testing

/// The GPS thread's decisions as a transcript, in the style of `OBDSessionTests`: the receiver's events and the
/// vehicle's, interleaved as they would arrive, go in on virtual time; the paces, the motion heard, what other threads
/// read, and the pings kept and committed come out. The test's thread is the GPS thread here (it calls `handle` and
/// `housekeeping` as the reader does); the vehicle's events wait in the inbox until the next housekeeping takes them.
@Suite("Tracking transcript")
struct TrackingTranscriptTests {
    enum Step {
        case link(GPSLinkState)
        /// A fix `speed` m/s north, at the receiver's next second (the virtual clock moves with it).
        case fix(speed: Double)
        /// Handed in by another thread (the vehicle's reader): only the inbox sees it until the next housekeeping.
        case vehicle(TrackingPipeline.VehicleEvent)
        case rate(Double)
        /// Virtual seconds pass without a fix; the reader, waiting for data, asks `idle` and does its housekeeping.
        case quiet(Double)
        case housekeeping
    }

    /// The pipeline on a virtual clock and a store of its own.
    final class Harness {
        let time = ManualTime()
        let directory: String
        let tracker: Tracker
        let recorder: PingRecorder
        let pipeline: TrackingPipeline
        /// What listeners and answers heard, from the GPS thread.
        final class Heard: Sendable {
            let lines = Mutex<[String]>([])
            func note(_ line: String) { lines.withLock { $0.append(line) } }
            func take() -> [String] { lines.withLock { lines in defer { lines.removeAll() }; return lines } }
        }
        let heard = Heard()
        var receiverTime = 1_800_000_000.0
        var north = 0.0

        init() throws {
            var template = Array("/tmp/driverd-transcript-XXXXXX".utf8CString)
            directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
            let clock = DaemonClock(time: time)
            tracker = Tracker(clock: clock)
            recorder = PingRecorder(store: try Store(directory: directory), movingWindow: 7, stationaryWindow: 12)
            pipeline = TrackingPipeline(
                tracker: tracker, state: TrackingState(rates: SamplingRates(), thresholds: Self.thresholds, now: clock.monotonic), recorder: recorder, hub: EventHub(),
                power: PowerInputs(powerSupplyDirectory: directory + "/no-power-supplies", ignitionPath: ""), saverThresholdPercent: 20,
                watchMode: .adaptive, logger: Logger(label: "transcript"))
            pipeline.whenMotionChanged { [heard] motion in heard.note("motion \(motion.rawValue)") }
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        /// Stationary after 4 s below the stationary speed (65 s by default), to keep the transcript short.
        static let thresholds = {
            var thresholds = MotionThresholds()
            thresholds.stationaryDuration = 4
            return thresholds
        }()

        /// One step in, one line out.
        func run(_ step: Step) -> String {
            var line: String
            switch step {
            case .link(let state):
                line = "link \(state.rawValue) → \(Self.describe(pipeline.handle(.link(state))))"
            case .fix(let speed):
                receiverTime += 1
                north += speed
                time.advance(by: 1)
                let fix = Fix(
                    time: receiverTime, latitude: 49.0 + north / 111_320, longitude: 12.1, speed: speed, track: 0, horizontalError: 5, mode: 3)
                line = "fix \(Int(speed)) m/s → \(Self.describe(pipeline.handle(.fix(fix))))"
            case .vehicle(let event):
                pipeline.vehicle(event)
                line = "vehicle \(Self.describe(event)) (in the inbox)"
            case .rate(let hz):
                pipeline.submit(.rateRequest(
                    RateRequest(connection: 7, pid: 1, uid: 0, hz: hz),
                    answer: { [heard] hz in heard.note("rate in force \(TextFormat.fixed(hz, decimals: 1)) Hz") }))
                line = "rate \(hz) Hz (in the inbox)"
            case .quiet(let seconds):
                time.advance(by: seconds)
                receiverTime += seconds
                let idle = pipeline.idle()
                line = "quiet \(Int(seconds)) s → idle \(idle.map { TextFormat.fixed($0, decimals: 1) + " s" } ?? "never"), \(Self.describe(pipeline.housekeeping()))"
            case .housekeeping:
                line = "housekeeping → \(Self.describe(pipeline.housekeeping()))"
            }
            let heard = heard.take()
            if !heard.isEmpty { line += " · heard " + heard.joined(separator: ", ") }
            let summary = tracker.summary
            let kept = recorder.kept
            line += " | \(summary.link.rawValue), \(summary.motion.rawValue), \(TextFormat.fixed(summary.hz, decimals: 1)) Hz"
            line += " | pings kept \(kept) (written \(kept - recorder.delivered)), held \(recorder.pendingCount)"
            return line
        }

        static func describe(_ pace: GPSPace) -> String {
            switch pace {
            case .continue: "continue"
            case .stream: "stream"
            case .pause(let seconds, let release): "pause \(TextFormat.fixed(seconds, decimals: 1)) s\(release ? " released" : "")"
            }
        }

        static func describe(_ event: TrackingPipeline.VehicleEvent) -> String {
            switch event {
            case .speed(let speed, _): speed.map { "\(Int($0)) m/s" } ?? "speed unknown"
            case .engine(let running): "engine \(running.map { $0 ? "running" : "off" } ?? "unknown")"
            case .batteryProtection(let on): "battery protection \(on ? "on" : "off")"
            }
        }

        static func describe(_ chores: GPSHousekeeping) -> String {
            let pace = chores.pace.map(describe) ?? "no pace"
            return "\(pace), due in \(chores.dueIn.map { TextFormat.fixed($0, decimals: 1) + " s" } ?? "never")"
        }
    }

    @Test("a drive into a tunnel and a stop in it: fixes and the vehicle's speed interleaved, the vehicle's events taken between the fixes in the order they came; pings committed by their window")
    func tunnelTranscript() throws {
        let harness = try Harness()
        var steps: [Step] = [.link(.connected), .housekeeping]
        steps += Array(repeating: .fix(speed: 12), count: 4)
        // The vehicle's speed while the sky is there: the fixes decide; it is evidence only without them.
        steps += [.vehicle(.speed(12, nextWithin: 1)), .fix(speed: 12), .housekeeping]
        // Into the tunnel: no fixes, the vehicle's speed each second (taken at each wake-up).
        for _ in 0..<8 { steps += [.vehicle(.speed(12, nextWithin: 1)), .quiet(1)] }
        // Stopped in the tunnel: stationary once the vehicle's speed stayed 0 for 4 s.
        for _ in 0..<6 { steps += [.vehicle(.speed(0, nextWithin: 1)), .quiet(1)] }
        // A front end asks for 5 Hz; the vehicle's battery is protected, then no longer.
        steps += [.rate(5), .housekeeping, .vehicle(.batteryProtection(true)), .housekeeping, .vehicle(.batteryProtection(false)), .housekeeping]
        let transcript = steps.map(harness.run)
        let expected = """
            link connected → continue | connected, unknown, 1.0 Hz | pings kept 0 (written 0), held 0
            housekeeping → no pace, due in 70.0 s | connected, unknown, 1.0 Hz | pings kept 0 (written 0), held 0
            fix 12 m/s → stream · heard motion moving | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 1
            fix 12 m/s → stream | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 2
            fix 12 m/s → stream | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 3
            fix 12 m/s → stream | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 4
            vehicle 12 m/s (in the inbox) | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 4
            fix 12 m/s → stream | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 5
            housekeeping → no pace, due in 3.0 s | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 5
            vehicle 12 m/s (in the inbox) | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 5
            quiet 1 s → idle 5.1 s, no pace, due in 2.0 s | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 5
            vehicle 12 m/s (in the inbox) | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 5
            quiet 1 s → idle 4.1 s, no pace, due in 1.0 s | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 5
            vehicle 12 m/s (in the inbox) | connected, moving, 1.0 Hz | pings kept 0 (written 0), held 5
            quiet 1 s → idle 3.1 s, no pace, due in 62.0 s | connected, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 12 m/s (in the inbox) | connected, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle 2.1 s, no pace, due in 61.0 s | connected, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 12 m/s (in the inbox) | connected, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle 1.1 s, no pace, due in 60.0 s | connected, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 12 m/s (in the inbox) | connected, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle 0.1 s, no pace, due in 59.0 s | connected, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 12 m/s (in the inbox) | connected, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle never, no pace, due in 58.0 s | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 12 m/s (in the inbox) | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle never, no pace, due in 57.0 s | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 0 m/s (in the inbox) | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle never, no pace, due in 56.0 s | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 0 m/s (in the inbox) | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle never, no pace, due in 55.0 s | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 0 m/s (in the inbox) | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle never, no pace, due in 54.0 s | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 0 m/s (in the inbox) | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle never, no pace, due in 53.0 s | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            vehicle 0 m/s (in the inbox) | noFix, moving, 1.0 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle never, no pace, due in 52.0 s · heard motion stationary | noFix, stationary, 0.1 Hz | pings kept 5 (written 5), held 0
            vehicle 0 m/s (in the inbox) | noFix, stationary, 0.1 Hz | pings kept 5 (written 5), held 0
            quiet 1 s → idle 1.1 s, no pace, due in 51.0 s | noFix, stationary, 0.1 Hz | pings kept 5 (written 5), held 0
            rate 5.0 Hz (in the inbox) | noFix, stationary, 0.1 Hz | pings kept 5 (written 5), held 0
            housekeeping → stream, due in 51.0 s · heard rate in force 5.0 Hz | noFix, stationary, 5.0 Hz | pings kept 5 (written 5), held 0
            vehicle battery protection on (in the inbox) | noFix, stationary, 5.0 Hz | pings kept 5 (written 5), held 0
            housekeeping → pause 3600.0 s released, due in 51.0 s | noFix, stationary, 5.0 Hz | pings kept 5 (written 5), held 0
            vehicle battery protection off (in the inbox) | noFix, stationary, 5.0 Hz | pings kept 5 (written 5), held 0
            housekeeping → stream, due in 51.0 s | noFix, stationary, 5.0 Hz | pings kept 5 (written 5), held 0
            """
        #expect(transcript == expected.split(separator: "\n").map(String.init), "\(transcript.joined(separator: "\n"))")
    }
}
