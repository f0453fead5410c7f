#if canImport(Glibc)
import Glibc
#endif
import BackendClient
import DriverAPI
import DriverDomain
import DriverStore
import GPSKit
import JSONRPC
import OBDKit
import Logging
import ServiceLifecycle

/// The daemon's parts, wired once. `Daemon.run` serves them on the socket under systemd; tests build them
/// in-process (a temporary store, a stand-in backend, no socket) and call the handlers through `router`.
struct DaemonAssembly: Sendable {
    /// What the daemon is made from; everything else is built here.
    struct Inputs: Sendable {
        var config: DaemonConfig
        var configPath = ""
        var configWarnings: [ConfigIssue] = []
        /// The configuration's layers as this start resolved them (the fleet's document on top of the file).
        var remote: RemoteConfigStart? = nil
        /// Makes the support bundle the fleet may ask for (nil: this build answers such requests with a refusal).
        var bundleMaker: DiagBundleMaker? = nil
        var store: Store
        /// nil: no backend configured (nothing is sent).
        var backend: (any BackendAPI)?
        /// The backend's WebSocket, tried before HTTPS batches and push polling.
        var webSocket: WebSocketLink?
        /// The unit's key and certificate (nil without a backend, or in-process tests).
        var identity: UnitIdentity? = nil
        /// The daemon's clocks and timers (`DaemonClock(time:)`: the system's, or a virtual time in tests).
        var clock: DaemonClock
        /// Where fixes come from.
        var fixSource: FixSource = .gpsd
        var levelControl = LogLevelControl(.info)
        var recentWarnings = RecentWarnings()
        var socketActivated = false
    }

    enum FixSource: Sendable {
        /// gpsd at `gps.gpsd`, through libgps on a thread of its own.
        case gpsd
        /// The caller hands events to `pipeline` (`handIn`, taken on a thread of the pipeline's own) and to `vehicle`
        /// (in-process tests: fixes and the vehicle's readings at the virtual times they choose); no reader is started
        /// for either.
        case handedIn
    }

    let router: RPCRouter
    /// Method name → the type that registered it (`MethodTable`).
    let methodOwners: [String: String]
    let counters: RPCCounters
    /// The long-running parts, in start order; graceful shutdown runs in reverse (tracking commits its last pings
    /// before the uplink's final flush sends them).
    let services: [ServiceGroupConfiguration.ServiceConfiguration]
    let tracker: Tracker
    /// What the GPS reader hands each event to.
    let pipeline: TrackingPipeline
    let recorder: PingRecorder?
    let outbox: Outbox
    let uplink: Uplink?
    let workflow: Workflow
    let pushes: PushCenter
    let safety: Safety
    let shift: Shift
    let hub: EventHub
    let remoteConfig: RemoteConfigDesk
    let fleetRequests: FleetRequestDesk
    let vehicle: VehicleMonitor
    let health: HealthDesk

    static func make(_ inputs: Inputs) throws -> DaemonAssembly {
        let config = inputs.config, store = inputs.store, clock = inputs.clock
        guard let endpoint = GPSDEndpoint(parsing: config.gpsd) else {
            throw Daemon.StartupError(description: "gps.gpsd: \(config.gpsd) is not HOST:PORT")
        }
        let counters = RPCCounters()
        let tracker = Tracker(clock: clock)
        // A ping waits in memory for its batch and the answer (a batch interval and a grace): delivered in time, it
        // never touches the flash; otherwise it is written and synced at the end of that window (a standing van's
        // pings wait longer: `PingRecorder.parkedWindow`).
        let recorder = config.trackingEnabled ? PingRecorder(
            store: store, movingWindow: config.uplinkMovingSeconds + PingRecorder.answerGrace,
            stationaryWindow: max(max(config.uplinkStationarySeconds, config.uplinkSaverSeconds) + PingRecorder.answerGrace, PingRecorder.parkedWindow),
            retention: config.retention,
            onRetention: Self.logRetention) : nil
        let hub = EventHub()
        let outbox = Outbox(store: store)
        let shift = Shift(unitState: UnitState(store: store), autoStart: config.shiftAutoStart, clock: clock, logger: Logger(label: "shift"))
        shift.whenChanged { [weak shift] _ in if let shift { hub.publish(Events.shiftChanged, shift.status) } }
        let safety = Safety(limit: config.safetySpeedLimit, staleAfter: config.safetyStaleFixSeconds, clock: clock)
        let geofences = GeofenceMonitor(mode: config.arrivalMode, defaultRadius: config.arrivalRadius, dwellSeconds: config.arrivalDwellSeconds)
        let travel = TravelMonitor(
            book: TravelBook(store: store), recorder: recorder, idleSeconds: config.idleSeconds,
            harsh: HarshDrivingDetector.Settings(braking: config.harshBraking, acceleration: config.harshAcceleration),
            shiftStartedAt: shift.isOn ? shift.status.startedAt : nil, hub: hub, logger: Logger(label: "travel"))
        let pipeline = TrackingPipeline(
            tracker: tracker,
            state: TrackingState(
                rates: config.rates, thresholds: config.motion, limits: config.fixLimits,
                ignitionOnMeansMoving: config.effectiveIgnitionSource != .obd, now: clock.monotonic),
            recorder: recorder, hub: hub, geofences: geofences, travel: travel,
            power: PowerInputs(powerSupplyDirectory: config.powerSupplyDirectory, ignitionPath: config.ignitionPath),
            saverThresholdPercent: config.saverThresholdPercent, watchMode: config.gpsWatch, logger: Logger(label: "gps"),
            shift: shift, safety: safety, powerPollInterval: Double(config.powerPollSeconds), ignitionSource: config.effectiveIgnitionSource)
        let reader = inputs.fixSource == .gpsd ? GPSDReader(endpoint: endpoint, handler: pipeline, wakePipe: pipeline.wakePipe) : nil
        let tracking = TrackingRuntime(tracker: tracker, recorder: recorder, reader: reader, pipeline: pipeline, logger: Logger(label: "gps"))
        let uplink = inputs.backend.map { backend in Uplink(
            client: backend, webSocket: inputs.webSocket, outbox: outbox, recorder: recorder, stateDirectory: config.stateDirectory,
            credentials: config.backendUsername.isEmpty ? nil : .init(username: config.backendUsername, password: config.backendPassword),
            hub: hub, configuration: UplinkStateMachine.Configuration(
                movingInterval: config.uplinkMovingSeconds, stationaryInterval: config.uplinkStationarySeconds,
                saverInterval: config.uplinkSaverSeconds,
                backoff: Backoff(base: 1, cap: config.retryCapSeconds), urgentRetryInterval: config.urgentRetrySeconds,
                spreadWindow: config.spreadWindowSeconds),
            logger: Logger(label: "uplink"), cadence: { tracker.uplinkCadence },
            onShift: { shift.isOn }, maxLoginAge: config.maxLoginAgeHours * 3600, clock: clock,
            heartbeat: { tracker.heartbeat() }) }
        if let uplink {
            pipeline.whenCadenceMayHaveChanged { [weak uplink] in uplink?.cadenceMayHaveChanged() }
            shift.whenChanged { [weak uplink] _ in uplink?.cadenceMayHaveChanged() }
        }
        shift.whenChanged { [weak pipeline] _ in pipeline?.shiftChanged() }
        ClockLog.start(clock, uplink: uplink)
        let pushes = PushCenter(box: PushBox(store: store), hub: hub, safety: safety, shift: shift, logger: Logger(label: "pushes"))
        // What the push centre must react to arrives as a stream its service consumes (no task per callback).
        let (pushEvents, pushContinuation) = AsyncStream.makeStream(of: PushService.Event.self)
        safety.whenChanged { [weak safety] change in
            guard let safety else { return }
            if change == .opened { pushContinuation.yield(.gateOpened) }
            hub.publish(Events.safetyChanged, safety.status(heldPushes: pushes.heldCount.withLock { $0 }))
        }
        hub.whenSubscribed { connection, topics in
            if topics.contains(Events.push.topic) || topics.contains(Events.stopLeftUnfinished.topic) {
                pushContinuation.yield(.subscribed(connection, topics))
            }
        }
        let workflow: Workflow
        let visits: StopVisits
        do {
            visits = try StopVisits(
                book: VisitBook(store: store), geofences: geofences, hub: hub, pushes: pushes, clock: clock, logger: Logger(label: "workflow"))
            workflow = try Workflow(
                book: TaskBook(store: store), outbox: outbox, session: uplink?.session, hub: hub, tracker: tracker,
                spool: PhotoSpool(stateDirectory: config.stateDirectory, health: store.health), pushes: pushes, shift: shift, logger: Logger(label: "workflow"),
                geofences: geofences, visits: visits, travel: travel)
        } catch {
            throw Daemon.StartupError(description: "cannot read the tasks in the store: \(error)")
        }
        let vehicle = VehicleMonitor(
            settings: .init(
                adapter: config.vehicleAdapter.isEmpty ? nil : config.vehicleAdapter, ignitionSource: config.effectiveIgnitionSource,
                lowVoltage: config.vehicleLowVoltage, lowVoltageSeconds: config.vehicleLowVoltageSeconds,
                shutdownOnLowVoltage: config.shutdownOnLowVoltage, parkedInterval: config.vehicleParkedPollSeconds),
            tracking: pipeline, shift: shift, outbox: outbox, book: VehicleFaultBook(store: store), hub: hub, travel: travel, clock: clock,
            logger: Logger(label: "vehicle"))
        let vehicleAddress = inputs.fixSource == .gpsd ? OBDAdapterAddress(parsing: config.vehicleAdapter, baud: config.vehicleBaudRate) : nil
        let vehicleReader = vehicleAddress.map { address in
            OBDReader(
                address: address, handler: vehicle,
                schedule: VehiclePollSchedule(settings: .init(
                    // Protecting the battery the voltage is read five times less often than parked.
                    parkedInterval: config.vehicleParkedPollSeconds, faultInterval: config.vehicleFaultCheckSeconds,
                    protectingInterval: 5 * config.vehicleParkedPollSeconds)))
        }
        if let vehicleReader { vehicle.attach(vehicleReader) }
        travel.readVehicle { vehicle.tripReading() }
        let remote = inputs.remote ?? RemoteConfigStart(layers: ConfigLayers(file: [:]), config: config, running: nil, onTrial: false)
        let outboxDesk = OutboxDesk(uplink: uplink, outbox: outbox, clock: clock, identity: { [identity = inputs.identity] in identity?.status(at: clock.now()) })
        let remoteConfig = RemoteConfigDesk(
            book: RemoteConfigBook(store: store), outbox: outbox, session: uplink?.session, start: remote, clock: clock, logger: Logger(label: "config"))
        let packages = InstalledPackagesFile(path: config.updateDpkgStatus, logger: Logger(label: "health"))
        let health = HealthDesk(
            settings: .init(interval: Double(config.healthReportMinutes) * 60, textfile: config.metricsTextfile, stateDirectory: config.stateDirectory),
            readings: .init(
                gps: { tracking.gpsStatus() }, onShift: { shift.status.onShift }, clock: { tracker.clock.status() },
                identity: { [identity = inputs.identity] in identity?.status(at: clock.now()) }, vehicle: { vehicle.status() },
                frontEnds: { counters.openConnections }, remoteConfigVersion: { remote.running },
                kioskVersion: { packages.current.packages["driverd-kiosk"]?.version },
                stopCause: { remoteConfig.restartFor.withLock { $0 } != nil ? .configuration : .cleanStop }),
            outbox: outbox, recentWarnings: inputs.recentWarnings, clock: clock,
            updated: access(config.stateDirectory + "/update/outcome.json", F_OK) == 0, logger: Logger(label: "health"))
        let runtime = AgentRuntime(
            started: .now, socketPath: config.socketPath, socketActivated: inputs.socketActivated, counters: counters,
            logLevel: inputs.levelControl, tracking: tracking,
            uplinkStatus: { [outboxDesk] in try outboxDesk.status(maxAge: .seconds(1)) },
            shiftStatus: { shift.status }, safetyStatus: { safety.status(heldPushes: pushes.heldCount.withLock { $0 }) },
            identityStatus: { [identity = inputs.identity] in identity?.status(at: clock.now()) },
            storeStatus: { [health = store.health] in health.check() },
            health: { health.agentHealth() },
            logger: Logger(label: "driverd"))

        var methods = MethodTable()
        methods.add(runtime)
        let diagRuntime = DiagRuntime(
            agent: runtime, config: config, configPath: inputs.configPath, configWarnings: inputs.configWarnings, store: store,
            recentWarnings: inputs.recentWarnings, vehicle: { vehicle.status() })
        methods.add(diagRuntime)
        let fleetRequests = FleetRequestDesk(
            book: FleetRequestBook(store: store), outbox: outbox, tracker: tracker, levelControl: inputs.levelControl,
            settings: .init(
                chunkBytes: config.diagChunkBytes, maxBundleBytes: config.diagMaxBundleBytes, configuredLevel: Logger.Level(config.logLevel),
                spoolDirectory: config.stateDirectory + "/diagnostics"),
            report: { try diagRuntime.report() }, bundleMaker: inputs.bundleMaker, logger: Logger(label: "fleet"))
        fleetRequests.removeUnneededBundles()
        methods.add(tracking)
        methods.add(pushes)
        methods.add(outboxDesk)
        methods.add(AuthDesk(session: uplink?.session, workflow: workflow))
        methods.add(WorkflowDesk(
            workflow: workflow,
            proofs: ProofOfDelivery(
                workflow: workflow, spool: workflow.spool, outbox: outbox, session: uplink?.session, flush: uplink.map(OutboxFlush.init),
                clock: clock, logger: Logger(label: "workflow")),
            safety: safety))
        methods.add(remoteConfig)
        methods.add(vehicle)
        methods.add(travel)
        methods.add(visits)
        let update = UpdateDesk(
            settings: .init(
                mode: config.updateMode, publicKey: config.updatePublicKey, maxBytesPerDay: config.updateMaxBytesPerDay,
                window: MaintenanceWindow(quietMinutes: config.updateQuietMinutes, hours: MaintenanceWindow.Hours.parse(config.updateWindow) ?? nil),
                directory: config.stateDirectory + "/update", dpkgStatus: config.updateDpkgStatus),
            outbox: outbox, session: uplink?.session, clock: clock,
            situation: { [ignition = PowerHistory()] in
                // Queued answers to releases do not hold an install back (the DOWNLOADED just queued among them).
                let depth = try outbox.depth()
                return MaintenanceWindow.Situation(
                    onShift: shift.status.onShift, moving: [.moving, .stopping].contains(safety.status(heldPushes: 0).state),
                    ignitionOffSeconds: ignition.offSeconds(ignition: tracker.ignition, monotonic: clock.monotonic),
                    hour: LocalHour.now(clock.now().time), tasksInProgress: await workflow.tasksInProgress(), queuedItems: depth.items - depth.byKind[.updateAck, default: 0])
            },
            logger: Logger(label: "update"))
        // A shift's end may open the maintenance window: the desk looks at once.
        shift.whenChanged { [weak update] _ in update?.situationChanged() }
        methods.add(update)
        let sos = SOSDesk(outbox: outbox, session: uplink?.session, tracker: tracker, clock: clock, hub: hub, logger: Logger(label: "sos"))
        methods.add(sos)
        methods.add(ShiftDesk(shift: shift, pushes: pushes, recorder: recorder, flush: uplink.map(OutboxFlush.init), travel: travel, logger: Logger(label: "shift")))
        if let uplink {
            // Front ends hear every push first; then each owner sends its lanes, takes their outcomes and picks its pushes.
            uplink.subscribe(UplinkSubscription(pushes: UplinkSubscription.everyPush, pushed: { await pushes.received($0) }))
            workflow.attach(to: uplink)
            visits.attach(to: uplink)
            travel.attach(to: uplink)
            sos.attach(to: uplink)
            remoteConfig.attach(to: uplink)
            fleetRequests.attach(to: uplink)
            vehicle.attach(to: uplink)
            update.attach(to: uplink)
            health.attach(to: uplink)
        }

        let services: [ServiceGroupConfiguration.ServiceConfiguration] =
            (uplink.map { [ServiceGroupConfiguration.ServiceConfiguration(service: UplinkService(uplink: $0))] } ?? []) + [
                .init(service: TrackingService(reader: reader, pipeline: pipeline)),
                .init(service: WorkflowService(workflow: workflow, logger: Logger(label: "workflow"))),
                .init(service: PushService(pushes: pushes, events: pushEvents)),
                .init(service: ArrivalService(workflow: workflow, geofences: geofences)),
                // Ending by itself means a document was accepted: the daemon stops (gracefully) to run it.
                .init(service: RemoteConfigService(desk: remoteConfig), successTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: FleetRequestService(desk: fleetRequests)),
                .init(service: UpdateService(desk: update)),
                .init(service: HealthService(desk: health)),
            ] + (vehicleReader.map { [ServiceGroupConfiguration.ServiceConfiguration(service: VehicleService(reader: $0))] } ?? [])
        return DaemonAssembly(
            router: methods.router, methodOwners: methods.owners, counters: counters, services: services, tracker: tracker, pipeline: pipeline, recorder: recorder, outbox: outbox, uplink: uplink,
            workflow: workflow, pushes: pushes, safety: safety, shift: shift, hub: hub, remoteConfig: remoteConfig, fleetRequests: fleetRequests,
            vehicle: vehicle, health: health)
    }

    /// A status line for systemd's `STATUS=`.
    func statusLine() -> String {
        let (link, motion, hz) = tracker.summary
        // A store that cannot be read shows as "queue unreadable" in the line itself.
        let depth = try? outbox.depth(maxAge: .seconds(1))
        return StatusLine(
            clients: counters.openConnections, link: link, motion: motion, samplingHz: hz, pings: recorder?.kept ?? 0,
            backend: uplink?.linkSummary ?? .disabled, queued: depth.map { $0.items + $0.pings }
        ).text
    }

    private static let retentionLogger = Logger(label: "outbox")

    @Sendable private static func logRetention(_ result: RetentionResult) {
        retentionLogger.warning(
            "ping backlog over its caps: \(result.thinned) thinned, \(result.dropped) dropped",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.backlogTrimmed.rawValue)"])
    }
}

extension DaemonConfig {
    /// The ping caps of `[outbox]`.
    var retention: RetentionPolicy { RetentionPolicy(maxAge: Double(maxPingAgeHours) * 3600, maxPings: maxPings) }
}

/// Arrivals and departures the geofence monitor decided on the GPS thread, handed to the workflow in order.
struct ArrivalService: Service {
    let workflow: Workflow
    let geofences: GeofenceMonitor

    func run() async {
        await cancelWhenGracefulShutdown {
            for await actions in geofences.actions { await workflow.geofence(actions) }
        }
    }
}

/// The push centre's long-running part: it takes what it must react to (the vehicle came to a stand, a front
/// end subscribed to pushes) from a stream, in order, until shutdown.
struct PushService: Service {
    enum Event: Sendable {
        case gateOpened
        case subscribed(RPCConnection, [String])
    }

    let pushes: PushCenter
    let events: AsyncStream<Event>

    func run() async {
        await cancelWhenGracefulShutdown {
            for await event in events {
                switch event {
                case .gateOpened: await pushes.deliverHeld()
                case .subscribed(let connection, let topics): await pushes.subscribed(connection, topics: topics)
                }
            }
        }
    }
}
