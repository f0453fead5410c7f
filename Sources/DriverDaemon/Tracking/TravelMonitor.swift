import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import Synchronization

/// The odometer and the trip and idle rules (pure), run for every accepted fix on the GPS reader's thread: a
/// lock-guarded class. Their state rides along with the pings' group commit; a trip that starts is stored at
/// once, and a finished trip or idle period is stored with its report for the backend in one durable
/// transaction. No I/O while holding the lock.
final class TravelMonitor: Sendable {
    private struct State {
        var odometer: Odometer
        var trips: TripDetector
        var record: TravelRecord
        /// The trip rules as last encoded into `record`: they change a few times a trip, fixes come every second.
        var encodedTrips: TripDetector?
        /// The monotonic time the last fix was observed: receiver time goes on from it while none comes.
        var lastFixMonotonic: Double?
        /// Seconds of state only (a manoeuvre): not stored, a restart mid-brake loses that one event.
        var harsh: HarshDrivingDetector
        /// The vehicle's reading at the open trip's start, as stored in `record.tripVehicleStart`.
        var vehicleStart: VehicleReading?
    }

    let book: TravelBook
    private let recorder: PingRecorder?
    private let state: Mutex<State>
    let logger: Logger
    private let hub: EventHub?
    /// What the vehicle's adapter reads now (nil: no adapter, or nothing known), read at a trip's start and end.
    private let vehicleReading = Mutex<(@Sendable () -> VehicleReading?)?>(nil)
    /// Each task's readings, from its acceptance to its end (`TravelMonitor+Tasks`).
    let taskReadings: Mutex<[String: TaskReading]>

    init(
        book: TravelBook, recorder: PingRecorder?, idleSeconds: Double, harsh: HarshDrivingDetector.Settings = .init(), shiftStartedAt: Double?,
        hub: EventHub? = nil, logger: Logger
    ) {
        self.book = book
        self.hub = hub
        self.recorder = recorder
        self.logger = logger
        var readings: [String: TaskReading] = [:]
        do {
            readings = try book.taskReadings()
        } catch {
            // Read again at each task's end: the distances of tasks in progress are shown as unknown meanwhile.
            logger.error("the tasks' distance readings cannot be read: \(error)")
        }
        taskReadings = Mutex(readings)
        var (record, trips, vehicleStart) = Self.restore(book, logger: logger)
        let anchor = record.anchorTime.flatMap { time in
            record.anchorLat.flatMap { lat in
                record.anchorLng.map { Odometer.Anchor(time: time, lat: lat, lng: $0, speed: record.anchorSpeed, horizontalError: record.anchorError) }
            }
        }
        let odometer = Odometer(metres: record.metres, bridgedMetres: record.bridgedMetres, gaps: record.gaps, anchor: anchor)
        trips.settings = TripDetector.Settings(idleSeconds: idleSeconds)
        // A shift this row has not seen yet starts its counts at the odometer's reading.
        if let shiftStartedAt, record.shiftStartedAt != shiftStartedAt {
            Self.startShift(&record, at: shiftStartedAt, odometer: odometer)
            Self.saveShiftStart(record, in: book, logger: logger)
        }
        state = Mutex(State(odometer: odometer, trips: trips, record: record, harsh: HarshDrivingDetector(settings: harsh), vehicleStart: vehicleStart))
    }

    /// The stored state, decoded whole, or set aside: a row (or a blob in it) this release cannot read is never
    /// replaced by a fresh default in place. It is copied into `set_aside_row` first and said once (MESSAGE_ID
    /// `stateSetAside`, `driverctl diag`); the odometer then starts from zero.
    private static func restore(_ book: TravelBook, logger: Logger) -> (TravelRecord, TripDetector, VehicleReading?) {
        do {
            let record = try book.read()
            let trips = try record.tripRules.map { try Codec.decode(TripDetector.self, from: $0) } ?? TripDetector()
            let vehicleStart = try record.tripVehicleStart.map { try Codec.decode(VehicleReading.self, from: $0) }
            return (record, trips, vehicleStart)
        } catch {
            let reason = "unreadable: \(error)"
            do {
                let count = try book.store.setAside(.travelState, reason: reason, now: WallClock.now())
                logger.error(
                    "the travel state cannot be read (\(error)): \(count) row(s) set aside in set_aside_row; the odometer starts from zero",
                    metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.stateSetAside.rawValue)"])
            } catch let failure {
                // The database refuses writes too (a full or failing disk): the next save of the travel state, if one
                // succeeds, replaces the row; said at the highest level so the unit is looked at.
                logger.critical(
                    "the travel state cannot be read (\(error)) nor set aside (\(Store.describeWriteFailure(failure))): the next save replaces it",
                    metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.stateSetAside.rawValue)"])
            }
            return (TravelRecord(), TripDetector(), nil)
        }
    }

    func readVehicle(_ reading: @escaping @Sendable () -> VehicleReading?) { vehicleReading.withLock { $0 = reading } }

    /// Trips whose vehicle and GNSS odometers disagreed by more than 5 %, ever.
    var odometerDisagreements: Int { state.withLock { $0.record.odometerDisagreements } }

    private static func startShift(_ record: inout TravelRecord, at time: Double, odometer: Odometer) {
        record.shiftStartedAt = time
        record.shiftStartMetres = odometer.metres
        record.shiftBridgedStartMetres = odometer.bridgedMetres
        record.shiftTrips = 0
        record.shiftIdleSeconds = 0
        record.shiftHarshEvents = 0
    }

    /// An accepted fix. Off shift nothing counts (the odometer only moves its anchor).
    func observe(_ fix: Fix, motion: Motion, ignition: Bool?, onShift: Bool, monotonic: Double) {
        let (actions, harsh, snapshot, startLacks) = state.withLock {
            state -> ([TripDetector.Action], HarshDrivingDetector.Event?, Snapshot, Bool) in
            state.lastFixMonotonic = monotonic
            guard onShift else {
                state.odometer.skip(fix)
                state.harsh.interrupt()
                return ([], nil, Self.snapshot(&state), false)
            }
            state.odometer.observe(fix, motion: motion)
            let actions = state.trips.observe(.init(
                time: fix.time, lat: fix.latitude, lng: fix.longitude, odometer: state.odometer.metres, bridged: state.odometer.bridgedMetres,
                speed: fix.speed, motion: motion, ignition: ignition))
            Self.count(actions, in: &state.record)
            let harsh = state.harsh.observe(time: fix.time, speed: fix.speed, lat: fix.latitude, lng: fix.longitude, ignition: ignition)
            if harsh != nil { state.record.shiftHarshEvents += 1 }
            let startLacks = state.trips.trip != nil && state.vehicleStart?.isComplete != true
            return (actions, harsh, Self.snapshot(&state), startLacks)
        }
        var record = withTripRules(snapshot)
        if actions.isEmpty, startLacks, let completed = completeVehicleStart() { record = completed }
        if let harsh { queue(harsh, record: record) }
        guard !actions.isEmpty else {
            if harsh == nil { recorder?.noteTravel(record, now: monotonic) }
            return
        }
        for action in actions { store(action, record: record) }
    }

    /// The adapter answers some seconds after the ignition (or only now found the odometer): a trip's start
    /// reading takes what the vehicle first says on the way, so the trip's vehicle distance and fuel are known.
    /// Returns the record to store when the start reading gained something.
    private func completeVehicleStart() -> TravelRecord? {
        guard let now = vehicleReading.withLock({ $0 })?() else { return nil }
        return state.withLock { state -> VehicleReading? in
            guard state.trips.trip != nil else { return nil }
            let start = state.vehicleStart ?? VehicleReading(odometerKm: nil, fuelPercent: nil, engineRunSeconds: nil)
            let completed = VehicleReading(
                odometerKm: start.odometerKm ?? now.odometerKm, fuelPercent: start.fuelPercent ?? now.fuelPercent,
                engineRunSeconds: start.engineRunSeconds ?? now.engineRunSeconds)
            guard completed != start else { return nil }
            return completed
        }.flatMap { completed in
            // Encoded outside the lock; a reading the row cannot hold is said, and the start stays as it was.
            do {
                let encoded = Data(try Codec.encode(completed))
                return state.withLock { state in
                    state.vehicleStart = completed
                    state.record.tripVehicleStart = encoded
                    return state.record
                }
            } catch {
                logger.error("the trip's vehicle start cannot be stored: \(error)")
                return nil
            }
        }
    }

    /// A harsh manoeuvre's report, queued with the count, durably (low priority: it waits for the next send).
    private func queue(_ event: HarshDrivingDetector.Event, record: TravelRecord) {
        let id = RandomID.uuid()
        let report = HarshEventReport(
            eventId: id, kind: event.kind == .braking ? .braking : .acceleration, startedAt: event.startedAt, endedAt: event.endedAt,
            peakMps2: (event.peak * 10).rounded() / 10, thresholdMps2: event.threshold,
            speedFrom: (event.speedFrom * 10).rounded() / 10, speedTo: (event.speedTo * 10).rounded() / 10,
            location: Location(lat: event.lat, lng: event.lng), timeSource: .gps)
        do {
            let item = OutboxItemRecord(
                kind: .harsh, taskId: TaskRecord.activityLane, idempotencyKey: id, payload: try Data(Codec.encode(report)), createdAt: event.endedAt)
            try book.queue(item, state: record)
            let what = event.kind == .braking ? "harsh braking" : "harsh acceleration"
            let kmh = { (speed: Double) in Int((speed * 3.6).rounded()) }
            logger.notice("\(what): \(TextFormat.fixed(event.peak, decimals: 1)) m/s² from \(kmh(event.speedFrom)) to \(kmh(event.speedTo)) km/h")
        } catch {
            logger.error("cannot store a harsh driving event: \(Store.describeWriteFailure(error))")
        }
    }

    /// The power inputs were read and no fix came for a while (a garage, a dead antenna): the ignition alone may
    /// end the trip or the idling. Receiver time goes on from the last fix by the monotonic clock.
    func noFixes(ignition: Bool?, onShift: Bool, monotonic: Double) {
        guard onShift, ignition == false else { return }
        let (actions, snapshot) = state.withLock { state -> ([TripDetector.Action], Snapshot?) in
            guard let since = state.lastFixMonotonic, monotonic - since > Self.fixesStopAfter, let last = state.trips.lastSeen else {
                return ([], nil)
            }
            let actions = state.trips.elapsed(until: last.time + (monotonic - since), ignition: ignition)
            Self.count(actions, in: &state.record)
            return (actions, actions.isEmpty ? nil : Self.snapshot(&state))
        }
        guard let snapshot else { return }
        let record = withTripRules(snapshot)
        for action in actions { store(action, record: record) }
    }

    /// Seconds without a fix after which time alone moves the rules (while fixes come, they do).
    static let fixesStopAfter = 15.0

    private static func count(_ actions: [TripDetector.Action], in record: inout TravelRecord) {
        for action in actions {
            switch action {
            case .tripStarted: break
            case .tripEnded: record.shiftTrips += 1
            case .idleEnded(let start, let end): record.shiftIdleSeconds += end.time - start.time
            }
        }
    }

    /// The state to store, and the trip rules when they changed since they were last encoded (encoding happens
    /// outside the lock, in `withTripRules`).
    private struct Snapshot {
        var record: TravelRecord
        var changedTrips: TripDetector?
    }

    private static func snapshot(_ state: inout State) -> Snapshot {
        let odometer = state.odometer
        state.record.metres = odometer.metres
        state.record.bridgedMetres = odometer.bridgedMetres
        state.record.gaps = odometer.gaps
        state.record.anchorTime = odometer.anchor?.time
        state.record.anchorLat = odometer.anchor?.lat
        state.record.anchorLng = odometer.anchor?.lng
        state.record.anchorSpeed = odometer.anchor?.speed
        state.record.anchorError = odometer.anchor?.horizontalError
        guard state.encodedTrips != state.trips else { return Snapshot(record: state.record) }
        state.encodedTrips = state.trips
        return Snapshot(record: state.record, changedTrips: state.trips)
    }

    /// `snapshot`'s record with its changed trip rules encoded in (in memory too, unless newer ones came meanwhile).
    /// Rules that cannot be encoded are said, and the row keeps its last ones rather than none.
    private func withTripRules(_ snapshot: Snapshot) -> TravelRecord {
        guard let trips = snapshot.changedTrips else { return snapshot.record }
        do {
            let encoded = Data(try Codec.encode(trips))
            state.withLock { if $0.encodedTrips == trips { $0.record.tripRules = encoded } }
            var record = snapshot.record
            record.tripRules = encoded
            return record
        } catch {
            logger.error("the trip rules cannot be stored (the row keeps the last ones): \(error)")
            return snapshot.record
        }
    }

    private func store(_ action: TripDetector.Action, record: TravelRecord) {
        do {
            switch action {
            case .tripStarted:
                var record = record
                let reading = vehicleReading.withLock({ $0 })?()
                let start = try reading.map { Data(try Codec.encode($0)) }
                record.tripVehicleStart = start
                state.withLock {
                    $0.record.tripVehicleStart = start
                    $0.vehicleStart = reading
                }
                try book.save(record)
                logger.info("trip started")
                return
            case .tripEnded(let start, let end):
                let id = RandomID.uuid()
                let bridged = end.bridged - start.bridged
                let metres = (end.odometer - start.odometer).rounded()
                var record = record
                let vehicleStart = record.tripVehicleStart.flatMap { stored in
                    logger.valueOrLog("reading the trip's stored vehicle start") { try Codec.decode(VehicleReading.self, from: stored) }
                }
                let vehicle = TripVehicle(start: vehicleStart, end: vehicleReading.withLock({ $0 })?())
                record.tripVehicleStart = nil
                if vehicle?.disagrees(gnssMeters: metres) == true {
                    record.odometerDisagreements += 1
                    logger.warning(
                        "trip odometers disagree: GNSS \(Int(metres)) m, the vehicle's \(Int(vehicle?.distanceMeters ?? 0)) m (more than 5 %)")
                }
                state.withLock {
                    $0.record.tripVehicleStart = nil
                    $0.vehicleStart = nil
                    $0.record.odometerDisagreements = record.odometerDisagreements
                }
                let report = TripReport(
                    tripId: id, startedAt: start.time, endedAt: end.time, distanceMeters: metres,
                    bridgedMeters: max(0, bridged.rounded()), start: Location(lat: start.lat, lng: start.lng), end: Location(lat: end.lat, lng: end.lng),
                    timeSource: .gps, vehicle: vehicle)
                try finish(.trip, id: id, start: start, end: end, payload: try Data(Codec.encode(report)), record: record, vehicleMetres: vehicle?.distanceMeters)
                logger.info("trip ended: \(Int(report.distanceMeters)) m in \(Int(end.time - start.time)) s\(vehicle?.distanceMeters.map { " (the vehicle's odometer: \(Int($0)) m)" } ?? "")")
            case .idleEnded(let start, let end):
                let id = RandomID.uuid()
                let report = IdleReport(
                    idleId: id, startedAt: start.time, endedAt: end.time, durationSeconds: (end.time - start.time).rounded(),
                    location: Location(lat: start.lat, lng: start.lng), timeSource: .gps)
                try finish(.idle, id: id, start: start, end: end, payload: try Data(Codec.encode(report)), record: record)
                logger.info("idling ended after \(Int(report.durationSeconds)) s")
            }
        } catch {
            logger.error("cannot store a trip or idle period: \(Store.describeWriteFailure(error))")
        }
    }

    private func finish(
        _ kind: TripRecord.Kind, id: String, start: TripDetector.Mark, end: TripDetector.Mark, payload: Data, record: TravelRecord, vehicleMetres: Double? = nil
    ) throws {
        let trip = TripRecord(
            id: id, kind: kind, startedAt: start.time, endedAt: end.time, metres: kind == .trip ? (end.odometer - start.odometer).rounded() : 0,
            startLat: start.lat, startLng: start.lng, endLat: end.lat, endLng: end.lng, vehicleMetres: vehicleMetres)
        let item = OutboxItemRecord(
            kind: kind == .trip ? .trip : .idle, taskId: TaskRecord.activityLane, idempotencyKey: id, payload: payload, createdAt: end.time)
        try book.finish(trip, report: item, state: record)
        hub?.publish(Events.tripRecorded, Self.view(trip))
    }

    /// A new shift: its counts start at the odometer's reading now.
    func shiftStarted(at time: Double) {
        let snapshot = state.withLock { state -> Snapshot in
            Self.startShift(&state.record, at: time, odometer: state.odometer)
            return Self.snapshot(&state)
        }
        Self.saveShiftStart(withTripRules(snapshot), in: book, logger: logger)
    }

    private static func saveShiftStart(_ record: TravelRecord, in book: TravelBook, logger: Logger) {
        do {
            try book.save(record)
        } catch {
            logger.error("the shift's start cannot be stored in the travel state (stored with the next fixes): \(Store.describeWriteFailure(error))")
        }
    }

    var shiftTravel: ShiftTravel {
        state.withLock { state in
            ShiftTravel(
                odometerMeters: (state.odometer.metres - state.record.shiftStartMetres).rounded(),
                bridgedMeters: (state.odometer.bridgedMetres - state.record.shiftBridgedStartMetres).rounded(),
                trips: state.record.shiftTrips, tripInProgress: state.trips.trip != nil, idleSeconds: state.record.shiftIdleSeconds.rounded(),
                harshEvents: state.record.shiftHarshEvents)
        }
    }

    /// The odometer's reading now, metres.
    var metres: Double { state.withLock { $0.odometer.metres } }

    /// The vehicle's own odometer now, km (nil: no adapter, or the car reports none).
    var vehicleKm: Double? { vehicleReading.withLock { $0 }?()?.odometerKm }

    func recentTrips(limit: Int = 50) throws -> TripList {
        TripList(trips: try book.recent(limit: limit).map(Self.view))
    }

    static func view(_ trip: TripRecord) -> TripView {
        TripView(
            id: trip.id, kind: trip.kind == .trip ? .trip : .idle, startedAt: trip.startedAt, endedAt: trip.endedAt,
            distanceMeters: trip.metres, state: trip.state.rawValue, vehicleDistanceMeters: trip.vehicleMetres)
    }
}

extension TravelMonitor: MethodOwner {
    /// `trips.list`.
    func register(in router: inout RPCRouter) {
        router.register(Methods.tripsList) { _, _ in try self.recentTrips() }
    }
}
