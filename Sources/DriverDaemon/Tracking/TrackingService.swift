#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain
import DriverStore
import GPSKit
import JSONRPC
import Logging
import ServiceLifecycle

/// GPS to pings: consumes the reader's events, runs them through the tracker, records the sampled fixes,
/// streams them to subscribers, and tells the reader how to watch gpsd so slow rates cost few wake-ups.
struct TrackingService: Service {
    let reader: GPSDReader
    let tracker: Tracker
    /// nil when tracking is off: fixes are still read (status, subscribers) but nothing is recorded.
    let recorder: PingRecorder?
    let hub: EventHub
    let power: PowerInputs
    let saverThresholdPercent: Int
    let watchMode: GPSWatchMode
    let logger: Logger
    /// How often the power inputs are re-read when no fix brings the chance sooner.
    var powerPollInterval: Duration = .seconds(60)

    func run() async throws {
        reader.start()
        refreshPower()
        let (deadlines, deadlineSink) = AsyncStream.makeStream(of: Double.self, bufferingPolicy: .bufferingNewest(1))
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await pollPower() }
                group.addTask { await commitByDeadlines(deadlines) }
                var lastPowerRead = ContinuousClock.now
                for await event in reader.events {
                    switch event {
                    case .link(let state):
                        linkChanged(state)
                    case .fix(let fix):
                        if let deadline = handle(fix) { deadlineSink.yield(deadline) }
                        // Piggyback the power inputs on a fix rather than waking up for them.
                        if ContinuousClock.now - lastPowerRead > .seconds(30) {
                            lastPowerRead = .now
                            refreshPower()
                        }
                    }
                }
                deadlineSink.finish()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            reader.stop()
        }
        // The final flush: nothing sampled is lost on a graceful stop.
        recorder?.flush()
    }

    /// Commits each batch by its deadline, so pings wait at most `maxDelay` even when fixes stop coming.
    private func commitByDeadlines(_ deadlines: AsyncStream<Double>) async {
        for await deadline in deadlines {
            let wait = deadline - WallClock.now()
            if wait > 0 { try? await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
            recorder?.flush()
        }
    }

    /// Returns a commit deadline when this fix started a new batch of pings.
    private func handle(_ fix: Fix) -> Double? {
        let outcome = tracker.observe(fix)
        if let gap = outcome.gapBefore {
            logger.warning(
                "gps: no fix for \(Int(gap.rounded())) s, fix regained",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.fixGap.rawValue)", "gap_seconds": "\(Int(gap.rounded()))"])
        }
        if outcome.motionChanged {
            logger.info(
                "motion: \(outcome.motion.rawValue)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.motionChanged.rawValue)", "motion": "\(outcome.motion.rawValue)"])
        }
        guard case .record(let reason) = outcome.decision else { return nil }
        var deadline: Double? = nil
        if let recorder {
            let now = WallClock.now()
            let ping = PingRecord(fix: fix, motion: outcome.motion, reason: reason, recordedAt: now)
            if case .commitBy(let by) = recorder.append(ping, now: now, nextSampleIn: 1 / outcome.effectiveHz) { deadline = by }
        }
        if hub.hasSubscribers(EventTopic.gpsFix), let params = try? Codec.encode(fix) {
            hub.publish(EventTopic.gpsFix, params: params)
        }
        apply(outcome.plan, justSampled: true)
        return deadline
    }

    /// Quiet gpsd until shortly before the next sample is due; stream again when the rate rises.
    func apply(_ plan: SamplingPolicy.WatchPlan, justSampled: Bool) {
        guard watchMode == .adaptive else { return }
        switch plan {
        case .continuous:
            reader.resume()
        case .periodic(let interval, let release):
            // Wake early enough to have a fresh epoch in hand when the sample is due.
            let lead = release ? 4.0 : 1.5
            if justSampled { reader.pause(for: max(0, interval - lead), release: release) }
        }
    }

    private func linkChanged(_ state: GPSLinkState) {
        tracker.setLink(state)
        let level: Logger.Level = state == .lost ? .warning : .info
        logger.log(
            level: level, "gps link: \(state.rawValue)",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.gpsLink.rawValue)", "link": "\(state.rawValue)", "gpsd": "\(reader.endpoint)"])
        // No fixes are coming for a while: commit what is pending now rather than at the next sample.
        if state == .lost || state == .noFix { recorder?.flush() }
    }

    private func pollPower() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: powerPollInterval)
            refreshPower()
        }
    }

    private func refreshPower() {
        let ignition = power.readIgnition()
        let saver = BatteryPolicy.saver(readings: power.readSupplies(), thresholdPercent: saverThresholdPercent, ignition: ignition)
        guard let plan = tracker.setPower(saver: saver, ignition: ignition) else { return }
        logger.notice(
            "power: battery \(saver ? "saver" : "normal"), ignition \(ignition.map { $0 ? "on" : "off" } ?? "absent")",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.powerMode.rawValue)", "battery_mode": "\(saver ? "saver" : "normal")"])
        if case .continuous = plan { apply(plan, justSampled: false) }
    }
}

/// Wall-clock seconds since 1970, for record stamps.
enum WallClock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
