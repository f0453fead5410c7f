import DriverAPI
import DriverDomain
import DriverStore
import GPSKit
import JSONRPC
import Logging
import Synchronization

/// GPS to pings, on the reader's thread: the tracker decides, the recorder commits, subscribers hear,
/// and the answer tells the reader how long gpsd may stay quiet.
final class TrackingPipeline: GPSEventHandler {
    let tracker: Tracker
    /// nil when tracking is off: fixes are still read (status, subscribers) but nothing is recorded.
    let recorder: PingRecorder?
    let hub: EventHub
    let power: PowerInputs
    let saverThresholdPercent: Int
    let watchMode: GPSWatchMode
    let logger: Logger
    /// Off shift nothing is recorded; every live fix feeds the safety gate.
    let shift: Shift?
    let safety: Safety?
    /// Set once the reader exists (the reader holds the pipeline as its handler).
    private let reader = Mutex<GPSDReader?>(nil)
    private let lastPowerRead = Mutex<ContinuousClock.Instant>(.now)
    /// The last link state other than `connecting`, so that retries against an absent gpsd (every few seconds,
    /// for hours) are logged once, not each time.
    private let settledLink = Mutex<GPSLinkState?>(nil)

    init(
        tracker: Tracker, recorder: PingRecorder?, hub: EventHub, power: PowerInputs, saverThresholdPercent: Int,
        watchMode: GPSWatchMode, logger: Logger, shift: Shift? = nil, safety: Safety? = nil
    ) {
        self.shift = shift
        self.safety = safety
        self.tracker = tracker
        self.recorder = recorder
        self.hub = hub
        self.power = power
        self.saverThresholdPercent = saverThresholdPercent
        self.watchMode = watchMode
        self.logger = logger
    }

    func attach(_ reader: GPSDReader) { self.reader.withLock { $0 = reader } }

    func handle(_ event: GPSEvent) -> GPSPace {
        switch event {
        case .link(let state):
            linkChanged(state)
            return .continue
        case .fix(let fix):
            let pace = handle(fix)
            // Piggyback the power inputs on a fix rather than waking up for them.
            let due = lastPowerRead.withLock { last in
                guard ContinuousClock.now - last > .seconds(30) else { return false }
                last = .now
                return true
            }
            if due { refreshPower() }
            return pace
        }
    }

    /// The fix stream paused: commit pending pings by their deadline even if no fix comes to trigger it.
    func idle() -> Double? { recorder?.commitIfDue(now: WallClock.now()) }

    private func handle(_ fix: Fix) -> GPSPace {
        let outcome = tracker.observe(fix)
        safety?.observe(speed: fix.speed, nextFixWithin: 1 / outcome.effectiveHz)
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
        guard case .record(let reason) = outcome.decision else { return .continue }
        // Suspected movement: stay awake to confirm it within seconds, not at the next slow sample.
        let plan = outcome.confirmingMovement ? .continuous : outcome.plan
        if let recorder, shift?.isOn ?? true {
            let now = WallClock.now()
            recorder.append(PingRecord(fix: fix, motion: outcome.motion, reason: reason, recordedAt: now), now: now, nextSampleIn: 1 / outcome.effectiveHz)
        }
        if hub.hasSubscribers(EventTopic.gpsFix), let params = try? Codec.encode(fix) {
            hub.publish(EventTopic.gpsFix, params: params)
        }
        return pace(after: plan)
    }

    /// Quiet gpsd until shortly before the next sample is due (adaptive watch at slow rates).
    private func pace(after plan: SamplingPolicy.WatchPlan) -> GPSPace {
        guard watchMode == .adaptive, case .periodic(let interval, let release) = plan else { return .continue }
        // Wake early enough that a fresh epoch is in hand when the sample is due.
        let lead = release ? 3.5 : 1.5
        return .pause(seconds: max(0, interval - lead), release: release)
    }

    /// The rate went up (a request, a motion or power change): stream again at once.
    func planChanged() {
        guard case .continuous = tracker.plan else { return }
        reader.withLock { $0 }?.resume()
    }

    private func linkChanged(_ state: GPSLinkState) {
        tracker.setLink(state)
        let changed = state == .connecting ? false : settledLink.withLock { settled in
            defer { settled = state }
            return settled != state
        }
        let level: Logger.Level = !changed ? .debug : state == .lost ? .warning : .info
        logger.log(
            level: level, "gps link: \(state.rawValue)",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.gpsLink.rawValue)", "link": "\(state.rawValue)"])
        // No fixes are coming for a while: commit what is pending now.
        if state == .lost || state == .noFix { recorder?.flush() }
    }

    func refreshPower() {
        let ignition = power.readIgnition()
        safety?.setIgnition(ignition)
        let saver = BatteryPolicy.saver(readings: power.readSupplies(), thresholdPercent: saverThresholdPercent, ignition: ignition)
        guard tracker.setPower(saver: saver, ignition: ignition) != nil else { return }
        logger.notice(
            "power: battery \(saver ? "saver" : "normal"), ignition \(ignition.map { $0 ? "on" : "off" } ?? "absent")",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.powerMode.rawValue)", "battery_mode": "\(saver ? "saver" : "normal")"])
        planChanged()
    }
}
