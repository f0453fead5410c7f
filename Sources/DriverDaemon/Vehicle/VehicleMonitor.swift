import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import OBDKit
import Synchronization
import SystemdKit

/// The vehicle as its OBD-II adapter reports it, on the reader's thread: a lock-guarded class that never calls
/// out while holding its lock. It owns what follows from the readings: the engine as the ignition
/// (`ignition.source = obd`) and the vehicle's speed (handed to the tracking pipeline, which decides the safety gate and
/// the motion with them on the GPS reader's thread), the
/// reader's polling mode, fault codes reported to the backend once, and the protection of the vehicle's battery.
final class VehicleMonitor: OBDEventHandler, Sendable {
    struct Settings: Sendable {
        var adapter: String?
        var ignitionSource: IgnitionSource
        var lowVoltage: Double
        var lowVoltageSeconds: Double
        var shutdownOnLowVoltage: Bool
        /// How often the speed is read while the vehicle does not move (the poll schedule's parked interval).
        var parkedInterval: Double = 60
    }

    private struct State {
        var link: VehicleLinkState
        var detail: String?
        var speed: (value: Double, at: Double)?
        var rpm: (value: Double, at: Double)?
        var fuelPercent: Double?
        var odometerKm: Double?
        var runSeconds: Int?
        /// The last of each the vehicle told, kept when it stops telling (the engine unit is silent with the
        /// ignition off): a trip that ends after the ignition went off ends at those readings. The run time is
        /// forgotten when the engine starts again.
        var lastKnown = VehicleReading(odometerKm: nil, fuelPercent: nil, engineRunSeconds: nil)
        var voltage: Double?
        var checkEngine: Bool?
        var stored: Set<String>?
        var pending: Set<String>?
        var supported: Set<UInt8> = []
        var engineRunning: Bool?
        var battery: BatteryGuard
        var protectingSince: Double?
        /// A battery report waiting for a shift (off shift nothing is sent).
        var batteryReportWaiting = false
        var lastPublished: VehicleStatus?
    }

    let settings: Settings
    private let state: Mutex<State>
    private let reader = Mutex<OBDReader?>(nil)
    /// The tracking pipeline, as the vehicle sees it: events in, decisions out.
    private let tracking: any VehicleTracking
    private let shift: Shift
    private let outbox: Outbox
    private let book: VehicleFaultBook
    private let hub: EventHub
    private let travel: TravelMonitor
    private let clock: DaemonClock
    private let logger: Logger

    init(
        settings: Settings, tracking: any VehicleTracking, shift: Shift, outbox: Outbox, book: VehicleFaultBook, hub: EventHub,
        travel: TravelMonitor, clock: DaemonClock, logger: Logger
    ) {
        self.travel = travel
        self.settings = settings
        self.tracking = tracking
        self.shift = shift
        self.outbox = outbox
        self.book = book
        self.hub = hub
        self.clock = clock
        self.logger = logger
        state = Mutex(State(
            link: settings.adapter == nil ? .absent : .connecting, detail: settings.adapter == nil ? "no adapter configured (vehicle.adapter)" : nil,
            battery: BatteryGuard(threshold: settings.lowVoltage, holdSeconds: settings.lowVoltageSeconds)))
        tracking.whenMotionChanged { [weak self] _ in self?.updateMode() }
        // What waited for a shift (fault codes, the battery report) goes when one starts.
        shift.whenChanged { [weak self] on in if on { self?.shiftStarted() } }
    }

    /// The reader (it holds this monitor as its handler): its polling mode follows what the monitor knows.
    func attach(_ reader: OBDReader) { self.reader.withLock { $0 = reader } }

    // MARK: - Events from the reader

    func handle(_ event: OBDEvent) {
        let now = clock.monotonic
        switch event {
        case .link(let link, let detail):
            linkChanged(link, detail: detail)
        case .supported(let pids):
            state.withLock { $0.supported = pids }
        case .reading(let reading):
            apply(reading, now: now)
        case .unavailable(let pid):
            unavailable(pid)
        case .lowPower(let accepted):
            logger.info("vehicle: adapter asked to rest (ATLP): \(accepted ? "taken" : "not supported")")
        }
        updateMode()
        publishIfChanged()
    }

    private func linkChanged(_ link: VehicleLinkState, detail: String?) {
        let before = state.withLock { state -> VehicleLinkState in
            defer {
                state.link = link
                state.detail = detail
                if link != .ok {
                    state.speed = nil
                    state.rpm = nil
                }
                if link == .absent || link == .connecting { state.voltage = nil }
            }
            return state.link
        }
        if link != .ok {
            vehicleSpeed(nil)
            updateEngine()
        }
        guard link != before, link != .connecting else { return }
        logger.log(
            level: link == .absent ? .warning : .info, "vehicle link: \(link.rawValue)\(detail.map { " (\($0))" } ?? "")",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.vehicleLink.rawValue)", "link": "\(link.rawValue)"])
    }

    private func apply(_ reading: OBDReading, now: Double) {
        switch reading {
        case .speed(let speed):
            state.withLock { $0.speed = (speed, now) }
            vehicleSpeed(speed)
        case .rpm(let rpm):
            state.withLock { $0.rpm = (rpm, now) }
            updateEngine()
        case .voltage(let volts):
            state.withLock { $0.voltage = volts }
            updateEngine()
            guardBattery(volts, now: now)
        case .fuelPercent(let percent): state.withLock { ($0.fuelPercent, $0.lastKnown.fuelPercent) = (percent, percent) }
        case .odometerKm(let km): state.withLock { ($0.odometerKm, $0.lastKnown.odometerKm) = (km, km) }
        case .runSeconds(let seconds): state.withLock { ($0.runSeconds, $0.lastKnown.engineRunSeconds) = (seconds, seconds) }
        case .status(let checkEngine, _): state.withLock { $0.checkEngine = checkEngine }
        case .faults(let codes, let pending):
            let complete = state.withLock { state -> Bool in
                if pending { state.pending = Set(codes) } else { state.stored = Set(codes) }
                // Both lists read (stored first, then pending): compare once per reading.
                return pending && state.stored != nil
            }
            if complete { reportFaults() }
        }
    }

    private func unavailable(_ pid: OBDPID) {
        state.withLock { state in
            switch pid {
            case .speed: state.speed = nil
            case .rpm: state.rpm = nil
            case .fuelLevel: state.fuelPercent = nil
            case .odometer: state.odometerKm = nil
            case .runTime: state.runSeconds = nil
            case .status: state.checkEngine = nil
            // The adapter's ATRV is asked instead.
            case .moduleVoltage: break
            }
        }
        if pid == .speed { vehicleSpeed(nil) }
        if pid == .rpm { updateEngine() }
    }

    /// Hands the speed to the pipeline, which decides motion and the safety gate with it (unknown: no next one due).
    private func vehicleSpeed(_ speed: Double?) {
        var nextWithin = 0.0
        if speed != nil {
            if case .moving(let interval) = reader.withLock({ $0 })?.mode { nextWithin = interval } else { nextWithin = settings.parkedInterval }
        }
        tracking.vehicle(.speed(speed, nextWithin: nextWithin))
    }

    private func updateEngine() {
        let now = clock.monotonic
        let (before, after) = state.withLock { state -> (Bool?, Bool?) in
            let running = VehicleIgnition.engineRunning(rpm: state.rpm?.value, rpmAge: state.rpm.map { now - $0.at }, voltage: state.voltage)
            // A new run of the engine counts its time from zero (PID 1F): the last run's count says nothing of it.
            if running == true, state.engineRunning != true { state.lastKnown.engineRunSeconds = state.runSeconds }
            defer { state.engineRunning = running }
            return (state.engineRunning, running)
        }
        guard before != after else { return }
        if let after { logger.info("vehicle: engine \(after ? "running" : "off")") }
        tracking.vehicle(.engine(running: after))
    }

    /// The reader's polling mode from the battery, the vehicle's movement and the engine. A speed read while parked
    /// that says the van pulls away is reason enough to read it at the fix rate (as a slow GPS sample showing
    /// movement is), before the motion detector has confirmed it.
    private func updateMode() {
        guard let reader = reader.withLock({ $0 }) else { return }
        let (running, protecting, pullingAway) = state.withLock {
            ($0.engineRunning, $0.battery.isProtecting, ($0.speed?.value ?? 0) >= Self.movingSpeed)
        }
        let (movement, interval) = tracking.movement
        let moving = movement == .moving || pullingAway
        reader.setMode(VehiclePollSchedule.mode(engineRunning: running, moving: moving, protecting: protecting, fixInterval: interval))
    }

    private static let movingSpeed = MotionThresholds().movingSpeed

    // MARK: - The vehicle's battery

    private func guardBattery(_ volts: Double, now: Double) {
        let ignition = tracking.ignition
        // A store that cannot be read counts as an SOS waiting: the radio is never cut from under one by a guess.
        let sosWaiting = logger.valueOrLog("reading the outbox for a waiting SOS") { try outbox.depth(maxAge: .seconds(1)).sos > 0 } ?? true
        let action = state.withLock { state in
            state.battery.observe(voltage: volts, engineRunning: state.engineRunning == true || ignition == true, sosWaiting: sosWaiting, now: now)
        }
        switch action {
        case .protect:
            let since = clock.now().time
            state.withLock {
                $0.protectingSince = since
                $0.batteryReportWaiting = true
            }
            logger.warning(
                "vehicle battery low: \(TextFormat.fixed(volts, decimals: 1)) V with the engine off for \(Int(settings.lowVoltageSeconds)) s; stopped reading the vehicle and released the GPS receiver",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.vehicleBatteryLow.rawValue)", "voltage": "\(volts)"])
            tracking.vehicle(.batteryProtection(true))
            updateMode()
            sendBatteryReport()
            if settings.shutdownOnLowVoltage { powerOff() }
        case .release:
            state.withLock { $0.protectingSince = nil }
            logger.notice("vehicle battery: \(TextFormat.fixed(volts, decimals: 1)) V, engine \(state.withLock { $0.engineRunning == true } ? "running" : "off"); reading the vehicle again")
            tracking.vehicle(.batteryProtection(false))
        case nil:
            break
        }
    }

    private func powerOff() {
        do {
            try PowerOff.request()
            logger.notice("asked logind to power the unit off (power.shutdown_on_low_voltage)")
        } catch {
            logger.error("cannot ask logind to power off: \(error)")
        }
    }

    /// Queues the one battery report when a shift is on; off shift it waits for the next shift.
    private func sendBatteryReport() {
        guard shift.isOn else { return }
        let (waiting, volts, odometer) = state.withLock { state in
            defer { state.batteryReportWaiting = false }
            return (state.batteryReportWaiting, state.voltage, state.odometerKm)
        }
        guard waiting else { return }
        let stamp = clock.now()
        let report = VehicleEventReport(
            eventId: RandomID.uuid(), kind: .batteryLow, observedAt: stamp.time, voltage: volts, odometerKm: odometer,
            location: position(), timeSource: stamp.source)
        queue([report], changes: nil)
    }

    // MARK: - Fault codes

    /// Compares the codes read with those the backend was told of; on shift, each change is queued once. Off shift
    /// they wait: the comparison runs again when a shift starts.
    private func reportFaults() {
        let current = state.withLock { state -> Set<VehicleFault>? in
            guard let stored = state.stored, let pending = state.pending else { return nil }
            return Set(stored.map { VehicleFault(code: $0, pending: false) } + pending.map { VehicleFault(code: $0, pending: true) })
        }
        guard let current, shift.isOn else { return }
        let reported: Set<VehicleFault>
        do {
            reported = try book.reported()
        } catch {
            logger.error("cannot read the reported fault codes: \(error)")
            return
        }
        let changes = FaultChanges(reported: reported, current: current)
        guard !changes.isEmpty else { return }
        let stamp = clock.now()
        let (checkEngine, volts, odometer) = state.withLock { ($0.checkEngine, $0.voltage, $0.odometerKm) }
        let location = position()
        let reports = changes.appeared.map { ($0, VehicleEventReport.Kind.faultAppeared) } + changes.cleared.map { ($0, .faultCleared) }
        for (fault, kind) in reports {
            logger.notice(
                "vehicle fault \(fault.code)\(fault.pending ? " (pending)" : "") \(kind == .faultAppeared ? "appeared" : "cleared")\(FaultDescriptions.describe(fault.code).map { ": \($0)" } ?? "")",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.vehicleFault.rawValue)", "code": "\(fault.code)"])
        }
        queue(reports.map { fault, kind in
            VehicleEventReport(
                eventId: RandomID.uuid(), kind: kind, observedAt: stamp.time, code: fault.code, pending: fault.pending,
                description: FaultDescriptions.describe(fault.code), checkEngine: checkEngine, voltage: volts, odometerKm: odometer,
                location: location, timeSource: stamp.source)
        }, changes: changes)
    }

    private func queue(_ reports: [VehicleEventReport], changes: FaultChanges?) {
        do {
            let items = try reports.map { report in
                OutboxItemRecord(
                    kind: .vehicle, taskId: TaskRecord.vehicleLane, idempotencyKey: report.eventId, payload: try Data(Codec.encode(report)),
                    createdAt: report.observedAt)
            }
            if let changes { try book.report(changes, items: items) } else { for item in items { try book.queue(item) } }
        } catch {
            logger.error("cannot store a vehicle report: \(Store.describeWriteFailure(error))")
        }
    }

    private func position() -> Location? {
        tracking.location(maxAge: 300)
    }

    private func shiftStarted() {
        reportFaults()
        sendBatteryReport()
    }

    // MARK: - Status

    /// What a trip's start and end keep: the vehicle's latest word (a trip ends with the ignition off, when no engine
    /// unit answers any more: what it said last is the reading at the end); nil when it never said anything.
    /// The vehicle's readings for a trip's start or end: the last it told of each (after the ignition went off the
    /// engine unit answers NO DATA, yet the odometer stands where it was).
    func tripReading() -> VehicleReading? {
        state.withLock { state in
            let known = state.lastKnown
            guard known.odometerKm != nil || known.fuelPercent != nil || known.engineRunSeconds != nil else { return nil }
            return known
        }
    }

    func status() -> VehicleStatus {
        let now = clock.monotonic
        let ignition = tracking.ignition
        let disagreements = travel.odometerDisagreements
        return state.withLock { state in
            let faults = (state.stored ?? []).map { VehicleFault(code: $0, pending: false, description: FaultDescriptions.describe($0)) }
                + (state.pending ?? []).subtracting(state.stored ?? []).map { VehicleFault(code: $0, pending: true, description: FaultDescriptions.describe($0)) }
            return VehicleStatus(
                adapter: settings.adapter, link: state.link, detail: state.detail, engineRunning: state.engineRunning, ignition: ignition,
                ignitionSource: settings.ignitionSource, speed: state.speed?.value, speedAge: state.speed.map { now - $0.at }, rpm: state.rpm?.value,
                fuelPercent: state.fuelPercent.map { ($0 * 10).rounded() / 10 }, odometerKm: state.odometerKm, engineRunSeconds: state.runSeconds,
                voltage: state.voltage, checkEngine: state.checkEngine, faults: faults.sorted { ($0.code, $0.pending ? 1 : 0) < ($1.code, $1.pending ? 1 : 0) },
                batteryProtectionSince: state.protectingSince, supportedPIDs: state.supported.sorted().map(OBDDecoding.pidName),
                odometerDisagreements: disagreements)
        }
    }

    /// `vehicle.changed` when something a front end shows changed: not each speed or RPM reading, fuel by a whole
    /// percent, the voltage by half a volt.
    private func publishIfChanged() {
        // Nobody listens: nothing to compare (a new subscriber asks vehicle.status first).
        guard hub.hasSubscribers(Events.vehicleChanged) else {
            state.withLock { $0.lastPublished = nil }
            return
        }
        let status = status()
        var current = status
        current.speed = nil
        current.speedAge = nil
        current.rpm = nil
        current.engineRunSeconds = nil
        current.fuelPercent = current.fuelPercent.map { $0.rounded() }
        current.voltage = current.voltage.map { ($0 * 2).rounded() / 2 }
        let changed = state.withLock { state -> Bool in
            defer { state.lastPublished = current }
            return state.lastPublished != current
        }
        if changed { hub.publish(Events.vehicleChanged, status) }
    }
}

extension VehicleMonitor: MethodOwner {
    /// `vehicle.status`.
    func register(in router: inout RPCRouter) {
        router.register(Methods.vehicleStatus) { _, _ in self.status() }
    }
}
