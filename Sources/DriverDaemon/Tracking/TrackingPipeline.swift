import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import GPSKit
import JSONRPC
import Logging
import ReaderThread
import Synchronization

/// GPS to pings, on one thread: the state decides, the recorder commits, subscribers hear, and the answer tells the
/// reader how long gpsd may stay quiet.
///
/// One thread of decisions: the GPS reader's (or, with fixes handed in, a thread of the pipeline's own). Its state
/// (`TrackingState`) is that thread's alone, unlocked; every input from another thread (the vehicle's events, rate
/// requests, the shift, a power read) waits in the inbox, in the order it came, and is taken between the batches of
/// fixes (`housekeeping`). What was decided is published to `tracker`, the one place other threads read it.
final class TrackingPipeline: GPSEventHandler {
    /// What the other threads read.
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
    /// Arrivals and departures at the route's stops (nil: none watched).
    let geofences: GeofenceMonitor?
    /// The odometer, trips and idling (nil: not kept).
    let travel: TravelMonitor?
    /// The power inputs are read at least this often (seconds), on the GPS thread (`housekeeping`).
    let powerPollInterval: Double
    /// Where the ignition comes from.
    let ignitionSource: IgnitionSource
    /// Wakes the GPS thread for the inbox: the reader sleeps on it (`GPSDReader(wakePipe:)`).
    let wakePipe = WakePipe()
    private let inbox = Mutex<[TrackingInput]>([])
    private let owned: ThreadOwned<Owned>

    /// The GPS thread's: the decisions' state and who hears of them.
    private struct Owned {
        var state: TrackingState
        /// Told when the motion changes (the vehicle's reader polls by it).
        var motionListener: (@Sendable (Motion) -> Void)?
        /// Told when the motion or the battery mode changed: the uplink's cadence may have.
        var cadenceListener: (@Sendable () -> Void)?
    }

    init(
        tracker: Tracker, state: TrackingState, recorder: PingRecorder?, hub: EventHub, geofences: GeofenceMonitor? = nil, travel: TravelMonitor? = nil,
        power: PowerInputs, saverThresholdPercent: Int, watchMode: GPSWatchMode, logger: Logger, shift: Shift? = nil, safety: Safety? = nil,
        powerPollInterval: Double = 60, ignitionSource: IgnitionSource = .file
    ) {
        self.ignitionSource = ignitionSource
        self.powerPollInterval = powerPollInterval
        self.geofences = geofences
        self.travel = travel
        self.shift = shift
        self.safety = safety
        self.tracker = tracker
        self.recorder = recorder
        self.hub = hub
        self.power = power
        self.saverThresholdPercent = saverThresholdPercent
        self.watchMode = watchMode
        self.logger = logger
        tracker.publish(state.snapshot)
        owned = ThreadOwned(Owned(state: state))
    }

    // MARK: - Inputs from other threads

    /// An input from another thread, for the GPS thread to take in order.
    enum TrackingInput: Sendable {
        case vehicle(VehicleEvent)
        /// A connection's rate request (hz 0 withdraws it); `answer` hears the rate in force.
        case rateRequest(RateRequest, answer: (@Sendable (Double) -> Void)?)
        /// The shift started or ended: a released receiver is watched again at once (one that should rest is
        /// released at its next fix).
        case shiftChanged
        /// Read the power inputs now (at start, and in tests).
        case readPower
        case motionListener(@Sendable (Motion) -> Void)
        case cadenceListener(@Sendable () -> Void)
        /// An event of the receiver's, handed in by an in-process test (no reader); `answer` hears the pace.
        case handedIn(GPSEvent, answer: @Sendable (GPSPace) -> Void)
        /// Answered once the housekeeping that takes it is done (a test's wait for the GPS thread).
        case settled(answer: @Sendable () -> Void)
    }

    func submit(_ input: TrackingInput) {
        inbox.withLock { $0.append(input) }
        wakePipe.wake()
    }

    func whenMotionChanged(_ action: @escaping @Sendable (Motion) -> Void) { submit(.motionListener(action)) }
    func whenCadenceMayHaveChanged(_ action: @escaping @Sendable () -> Void) { submit(.cadenceListener(action)) }
    func shiftChanged() { submit(.shiftChanged) }

    /// The rate in force once the GPS thread took `request`.
    func requestRate(_ request: RateRequest) async -> Double {
        await withCheckedContinuation { answer in submit(.rateRequest(request, answer: { answer.resume(returning: $0) })) }
    }

    /// Hands a receiver's event in (fixes without a reader) and returns the pace it decided.
    func handIn(_ event: GPSEvent) async -> GPSPace {
        await withCheckedContinuation { answer in submit(.handedIn(event, answer: { answer.resume(returning: $0) })) }
    }

    /// Returns once the GPS thread has taken everything handed in before, and done its housekeeping.
    func settle() async {
        await withCheckedContinuation { answer in submit(.settled(answer: { answer.resume() })) }
    }

    /// Without a reader (fixes handed in), the GPS thread is the pipeline's own: it takes the inbox and does the
    /// housekeeping by its deadlines, until stopped.
    func startOwnThread() -> ReaderRunner {
        let runner = ReaderRunner(wakePipe: wakePipe)
        runner.start(named: "tracking") { [self] in
            while !runner.isStopping {
                let due = housekeeping().dueIn
                wakePipe.wait(seconds: due.map { max(GPSDReader.minimumWait, $0) })
            }
        }
        return runner
    }

    // MARK: - The GPS thread

    /// Changes the state, then publishes it before anything is told of the change.
    private func decide<Result>(_ body: (inout TrackingState) -> Result) -> Result {
        let (result, snapshot) = owned.withValue { owned in
            let result = body(&owned.state)
            return (result, owned.state.snapshot)
        }
        tracker.publish(snapshot)
        return result
    }

    private func read<Result>(_ body: (TrackingState) -> Result) -> Result { owned.withValue { body($0.state) } }

    /// What the vehicle's adapter says, for the decisions the fixes also feed (motion, ignition and power, the
    /// safety gate, the receiver).
    enum VehicleEvent: Sendable, Equatable {
        /// The vehicle's speed (nil: unknown), and how soon the next one comes.
        case speed(Double?, nextWithin: Double)
        /// The engine as the adapter tells (nil: unknown).
        case engine(running: Bool?)
        /// The vehicle's battery is protected: the receiver is released (gpsd may power it down), or taken back.
        case batteryProtection(Bool)
    }

    func vehicle(_ event: VehicleEvent) { submit(.vehicle(event)) }

    /// Takes one input from the inbox; returns the pace it asks of the reader (nil: none).
    private func take(_ input: TrackingInput) -> GPSPace? {
        switch input {
        case .vehicle(let event):
            return apply(event)
        case .rateRequest(let request, let answer):
            let hz = decide { $0.setRequest(request) }
            answer?(hz)
            return planChanged()
        case .shiftChanged:
            return .stream
        case .readPower:
            return refreshPower()
        case .motionListener(let action):
            owned.withValue { $0.motionListener = action }
            return nil
        case .cadenceListener(let action):
            owned.withValue { $0.cadenceListener = action }
            return nil
        case .handedIn(let event, let answer):
            answer(handle(event))
            return nil
        case .settled:
            return nil
        }
    }

    /// A vehicle event decided, as the fixes are (motion, ignition and power, the gate, the receiver).
    private func apply(_ event: VehicleEvent) -> GPSPace? {
        switch event {
        case .speed(let speed, let nextWithin):
            safety?.observeVehicle(speed: speed, nextWithin: nextWithin)
            // The motion changed outside the fixes (the vehicle's speed in a tunnel): logged like the fixes' changes.
            let now = tracker.clock.monotonic
            guard let changed = decide({ $0.vehicleSpeed(speed, now: now) }) else { return nil }
            announce(changed)
            return planChanged()
        case .engine(let running):
            let changed = decide { $0.vehicleEngine(running: running) }
            return changed && ignitionSource == .obd ? refreshPower() : nil
        case .batteryProtection(let released):
            decide { $0.receiverReleased = released }
            return released ? .pause(seconds: Self.releasedPause, release: true) : .stream
        }
    }

    /// A changed motion, logged and told to the listeners, whichever evidence changed it.
    private func announce(_ motion: Motion) {
        logger.info("motion: \(motion.rawValue)", metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.motionChanged.rawValue)", "motion": "\(motion.rawValue)"])
        let (motionListener, cadenceListener) = owned.withValue { ($0.motionListener, $0.cadenceListener) }
        motionListener?(motion)
        cadenceListener?()
    }

    private static let releasedPause = 3600.0

    func handle(_ event: GPSEvent) -> GPSPace {
        switch event {
        case .link(let state):
            linkChanged(state)
            return .continue
        case .noFixReports(let count):
            decide { $0.noFixReports(count) }
            checkSilence()
            return .continue
        case .fix(let fix):
            return handle(fix)
        }
    }

    /// The power inputs, read on whatever wake-up of the reader comes within `slack` of their time (a fix, a slow
    /// sample, a reconnection attempt) rather than waking again for them; the reader sleeps no longer than the end of
    /// that window, so with no fixes at all (gpsd absent, a receiver in a garage) they are still read. A window on
    /// both sides: parked, the 10-s samples fall 10 s apart, and a window only before the time let a sample just
    /// after it pass, costing a wake-up of its own.
    ///
    /// Held pings are committed by their deadline here too, whatever gpsd does: the reader calls this at every
    /// wake-up, its pauses included. (Committed only when the reader waited for data, the pings of a drive's last
    /// seconds waited through the stationary sample's pause that followed, up to 15 s, past their 7-s window: the
    /// 1,000-cut soak of seed 1212 lost 6 of them.)
    ///
    /// First the inbox, in the order it came: the inputs decided here, between the batches of fixes.
    func housekeeping() -> GPSHousekeeping {
        var pace: GPSPace? = nil
        var settled: [@Sendable () -> Void] = []
        while case let inputs = inbox.withLock({ inbox in defer { inbox.removeAll() }; return inbox }), !inputs.isEmpty {
            for input in inputs {
                if case .settled(let answer) = input { settled.append(answer) }
                pace = take(input) ?? pace
            }
        }
        let now = tracker.clock.monotonic
        let commit = recorder?.commitIfDue(now: now)
        noteHeld("a ping commit", startedAt: now)
        let (power, powerPace) = powerHousekeeping()
        for answer in settled { answer() }
        return GPSHousekeeping(pace: powerPace ?? pace, dueIn: [commit, power].compactMap { $0 }.min())
    }

    /// A step of the reader's that waits for the disk (the pings' commit, a trip's store waiting for SQLite's writer)
    /// and held it a second or more (worn flash, a sync queued behind others) is said, named: held pings wait for
    /// the reader, so a power cut in that time can lose pings older than their window.
    private func noteHeld(_ step: String, startedAt: Double) {
        let took = tracker.clock.monotonic - startedAt
        guard took >= 1 else { return }
        logger.notice(
            "\(step) held the GPS reader for \(TextFormat.fixed(took, decimals: 1)) s",
            metadata: ["monotonic": "\(startedAt)", "seconds": "\(took)", "step": "\(step)"])
    }

    /// The seconds until the power inputs are due, and the pace a read now asks for.
    private func powerHousekeeping() -> (dueIn: Double, pace: GPSPace?) {
        let slack = min(10, powerPollInterval / 4)
        let elapsed = tracker.clock.monotonic - read { $0.lastPowerRead }
        guard elapsed >= powerPollInterval - slack else { return (powerPollInterval + slack - elapsed, nil) }
        return (powerPollInterval + slack, refreshPower())
    }

    /// The fix stream paused (the reader waits for data): notice a receiver that went silent.
    func idle() -> Double? { checkSilence() }

    /// A receiver connected but without a usable fix for too long is `noFix`: warned once per spell. Returns
    /// the seconds until the next check.
    @discardableResult
    private func checkSilence() -> Double? {
        let now = tracker.clock.monotonic
        // Called before every wait for data: the state changes (and is published) only when a spell begins.
        let (began, recheckIn) = owned.withValue { $0.state.checkSilence(now: now) }
        if let began {
            tracker.publish(read { $0.snapshot })
            let rejected = began.rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
            logger.warning(
                "gps: connected, but no usable fix for \(Int(began.seconds.rounded())) s (rejected so far: \(rejected.isEmpty ? "none" : rejected))",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.noUsableFix.rawValue)", "silent_seconds": "\(Int(began.seconds.rounded()))"])
            // Nothing comes to trigger it: commit what is pending now.
            recorder?.flush()
        }
        return recheckIn
    }

    private func handle(_ fix: Fix) -> GPSPace {
        let overnight = isOvernight
        let pace = observe(fix, overnight: overnight)
        // The gate opens with time: a slow sample would hear it up to an interval late (the screen's card stayed
        // disabled 10 s after a start in a parked van), so the reader reads again when the vehicle has settled.
        // Overnight the receiver rests: the screen has no card to enable before the shift starts.
        guard !overnight, case .pause(let seconds, let release) = pace, let settlesIn = safety?.settlesIn, settlesIn < seconds else { return pace }
        return .pause(seconds: settlesIn + Self.dueEpochMargin, release: release)
    }

    private func observe(_ fix: Fix, overnight: Bool) -> GPSPace {
        let reference = tracker.clock.now().time, now = tracker.clock.monotonic
        let outcome = decide { $0.observe(fix, now: now, reference: reference) }
        if outcome.gpsTimeWentBack { tracker.clock.forgetGPS() }
        switch outcome.verdict {
        case .accept, .reanchor: tracker.clock.observeFix(time: fix.time)
        case .reject, .duplicate: break
        }
        switch outcome.verdict {
        case .reject(let reason):
            // Never silently: counted in gps.status and diag, and logged here for whoever turns debug on.
            logger.debug(
                "gps: fix rejected (\(reason.rawValue))",
                metadata: ["reason": "\(reason.rawValue)", "fix_time": "\(fix.time)", "eph": "\(fix.horizontalError.map { "\($0)" } ?? "none")"])
            checkSilence()
            return .continue
        case .reanchor:
            logger.notice(
                "gps: the fix filter re-anchored on a new track (the fixes it had rejected agree with each other)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.fixReanchored.rawValue)"])
        case .duplicate:
            // gpsd's second report of an epoch already handled.
            return .continue
        case .accept:
            break
        }
        if outcome.fixesResumed {
            logger.notice("gps: usable fixes again", metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.gpsLink.rawValue)", "link": "connected"])
        }
        safety?.observe(speed: fix.speed, nextFixWithin: 1 / outcome.effectiveHz)
        let onShift = shift?.isOn ?? true
        if onShift { geofences?.observe(fix, motion: outcome.gpsMotion) }
        let travelled = tracker.clock.monotonic
        travel?.observe(fix, motion: outcome.gpsMotion, ignition: outcome.ignition, onShift: onShift, monotonic: travelled)
        noteHeld("the travel monitor (a trip's store)", startedAt: travelled)
        if let gap = outcome.gapBefore {
            logger.warning(
                "gps: no fix for \(Int(gap.rounded())) s, fix regained",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.fixGap.rawValue)", "gap_seconds": "\(Int(gap.rounded()))"])
        }
        if outcome.motionChanged { announce(outcome.motion) }
        if read({ $0.receiverReleased }) || overnight { return .pause(seconds: Self.releasedPause, release: true) }
        // Suspected movement: stay awake to confirm it within seconds, not at the next slow sample (even when an
        // earlier fix of the same batch asked for a pause).
        let plan = outcome.confirmingMovement ? .continuous : outcome.plan
        guard case .record(let reason) = outcome.decision else {
            guard watchMode == .adaptive else { return .continue }
            if plan == .continuous { return .stream }
            // A slow sample not due yet (the epochs read after a pause fell short of it, as when the receiver's
            // clock runs slow against the unit's): sleep until it is due instead of waking for every epoch.
            if case .periodic(_, false) = plan, let dueIn = outcome.dueIn, dueIn > 1 {
                return .pause(seconds: dueIn + Self.dueEpochMargin, release: false)
            }
            return .continue
        }
        if let recorder, shift?.isOn ?? true {
            let stamp = tracker.clock.now(), monotonic = tracker.clock.monotonic
            recorder.append(
                PingRecord(fix: fix, motion: outcome.motion, reason: reason, recordedAt: stamp.time, timeSource: stamp.source),
                now: monotonic, nextSampleIn: 1 / outcome.effectiveHz)
            noteHeld("a ping commit", startedAt: monotonic)
            // Each ping by its fix time, for whoever follows them to the backend (the power-cut tests do).
            logger.debug(
                "ping recorded", metadata: ["fix_time": "\(fix.time)", "motion": "\(outcome.motion.rawValue)", "monotonic": "\(monotonic)"])
        }
        hub.publish(Events.gpsFix, fix)
        return pace(after: plan)
    }

    /// Off shift with the ignition off (a van overnight): nothing is recorded and nothing needs the sky, so the
    /// receiver is released (gpsd may power it down) until the shift starts or the ignition comes on. Without an
    /// ignition input the receiver stays watched: its fixes are then the only sign the van drives off.
    private var isOvernight: Bool { !(shift?.isOn ?? true) && read({ $0.ignition }) == false }

    /// Read nothing until the next sample is due (adaptive watch at slow rates): one wake-up a sample.
    private func pace(after plan: SamplingPolicy.WatchPlan) -> GPSPace {
        guard watchMode == .adaptive else { return .continue }
        guard case .periodic(let interval, let release) = plan else { return .stream }
        // A released receiver needs waking early enough that a fresh epoch is in hand when the sample is due.
        if release { return .pause(seconds: max(0, interval - 3.5), release: true) }
        // Streaming on, the epochs of the pause wait in the socket: wake just after the epoch that is due has
        // arrived, so that one wake-up finds it (ending the pause at the due time itself found the epoch before it
        // and cost two more wake-ups a sample). The reader counts the pause from this epoch's arrival, not from now.
        return .pause(seconds: interval + Self.dueEpochMargin, release: false)
    }

    /// How long after the due epoch's time the pause ends: gpsd's report of an epoch comes some milliseconds
    /// after it (more on a loaded unit).
    static let dueEpochMargin = 0.3

    /// The rate went up (a request, a motion or power change): stream again at once.
    private func planChanged() -> GPSPace? {
        guard case .continuous = read({ $0.policy.watchPlan }) else { return nil }
        return .stream
    }

    private func linkChanged(_ state: GPSLinkState) {
        let now = tracker.clock.monotonic
        let changed = decide { $0.setLink(state, now: now) }
        let level: Logger.Level = !changed ? .debug : state == .lost ? .warning : .info
        logger.log(
            level: level, "gps link: \(state.rawValue)",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.gpsLink.rawValue)", "link": "\(state.rawValue)"])
        // No fixes are coming for a while: commit what is pending now.
        if state == .lost || state == .noFix { recorder?.flush() }
    }

    /// Reads the power inputs and applies them; returns the pace they ask for (nil: none).
    private func refreshPower() -> GPSPace? {
        let ignition: Bool? = switch ignitionSource {
        case .file: power.readIgnition()
        case .obd: read { $0.vehicleIgnition }
        case .gps: nil
        }
        safety?.setIgnition(ignition)
        let travelled = tracker.clock.monotonic
        travel?.noFixes(ignition: ignition, onShift: shift?.isOn ?? true, monotonic: travelled)
        noteHeld("the travel monitor (a trip's store)", startedAt: travelled)
        let saver = BatteryPolicy.saver(readings: power.readSupplies(), thresholdPercent: saverThresholdPercent, ignition: ignition)
        let now = tracker.clock.monotonic
        let (ignitionBefore, changed) = decide { state in (state.ignition, state.setPower(saver: saver, ignition: ignition, now: now) != nil) }
        guard changed else { return nil }
        logger.notice(
            "power: battery \(saver ? "saver" : "normal"), ignition \(ignition.map { $0 ? "on" : "off" } ?? "absent")",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.powerMode.rawValue)", "battery_mode": "\(saver ? "saver" : "normal")"])
        owned.withValue { $0.cadenceListener }?()
        // The ignition on wakes a receiver released for the night.
        if ignition == true, ignitionBefore != true { return .stream }
        return planChanged()
    }
}

/// What the vehicle monitor needs of tracking: it hands its events in (the pipeline decides motion, ignition, power
/// and the gate with them), and reads what was decided, never the tracker behind it.
protocol VehicleTracking: AnyObject, Sendable {
    func vehicle(_ event: TrackingPipeline.VehicleEvent)
    func whenMotionChanged(_ action: @escaping @Sendable (Motion) -> Void)
    /// The decided motion, and the fix interval it samples at.
    var movement: (motion: Motion, interval: Double) { get }
    /// The decided ignition (nil: unknown).
    var ignition: Bool? { get }
    /// Where the vehicle is, from a fix at most `maxAge` seconds old.
    func location(maxAge: Double) -> Location?
}

extension TrackingPipeline: VehicleTracking {
    var movement: (motion: Motion, interval: Double) { tracker.movement }
    var ignition: Bool? { tracker.ignition }
    func location(maxAge: Double) -> Location? {
        tracker.currentPosition(maxAge: maxAge).fix.map { Location(lat: $0.latitude, lng: $0.longitude, accuracy: $0.horizontalError) }
    }
}
