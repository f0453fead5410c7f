#if canImport(Glibc)
import Glibc
#endif
import BackendClient
import DriverAPI
import DriverDomain
import DriverStore
import GPSKit
import JSONRPC
import Logging
import ServiceLifecycle
import SystemdKit

/// Builds the daemon from its configuration and runs it until SIGTERM or SIGINT.
public enum Daemon {
    public struct StartupError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs the daemon. Returns after a graceful stop; throws when it cannot start.
    /// `configPath` is the file `config` came from, shown (redacted) by `diag.report`.
    public static func run(config: DaemonConfig, configPath: String, configWarnings: [ConfigIssue] = []) async throws {
        let levelControl = LogLevelControl(Logger.Level(config.logLevel))
        let sink = logSink(for: config.logTarget)
        let recentWarnings = RecentWarnings()
        // Every stamp (pings, actions, proofs, log entries) comes from here; durations from its monotonic clock.
        let clock = DaemonClock()
        LoggingSystem.bootstrap { label in
            DaemonLogHandler(label: label, sink: sink, control: levelControl, recentWarnings: recentWarnings, clock: clock)
        }
        let logger = Logger(label: "driverd")
        for warning in configWarnings {
            logger.warning(
                "config: \(warning)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.configWarning.rawValue)", "key": "\(warning.key)"])
        }

        try prepareStateDirectory(config.stateDirectory)
        let store: Store
        do {
            store = try Store(directory: config.stateDirectory)
        } catch {
            throw StartupError(description: "cannot open the store in \(config.stateDirectory): \(error)")
        }
        guard let endpoint = GPSDEndpoint(parsing: config.gpsd) else {
            throw StartupError(description: "gps.gpsd: \(config.gpsd) is not HOST:PORT")
        }
        let policy = PeerAccessPolicy.resolving(groupName: config.rpcGroup)
        let (listener, activated) = try makeListener(config, groupID: policy.groupID)
        let counters = RPCCounters()

        let tracker = Tracker(rates: config.rates, thresholds: config.motion, limits: config.fixLimits, clock: clock)
        let retentionLogger = Logger(label: "outbox")
        let recorder = config.trackingEnabled
            ? PingRecorder(
                store: store, retention: RetentionPolicy(maxAge: Double(config.maxPingAgeHours) * 3600, maxPings: config.maxPings),
                onRetention: { result in
                    retentionLogger.warning(
                        "ping backlog over its caps: \(result.thinned) thinned, \(result.dropped) dropped",
                        metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.backlogTrimmed.rawValue)"])
                })
            : nil
        let hub = EventHub()
        let outbox = Outbox(store: store)
        let shift = Shift(unitState: UnitState(store: store), autoStart: config.shiftAutoStart, clock: clock)
        let safety = Safety(limit: config.safetySpeedLimit, staleAfter: config.safetyStaleFixSeconds)
        let pipeline = TrackingPipeline(
            tracker: tracker, recorder: recorder, hub: hub,
            power: PowerInputs(powerSupplyDirectory: config.powerSupplyDirectory, ignitionPath: config.ignitionPath),
            saverThresholdPercent: config.saverThresholdPercent, watchMode: config.gpsWatch, logger: Logger(label: "gps"),
            shift: shift, safety: safety)
        let reader = GPSDReader(endpoint: endpoint, handler: pipeline)
        pipeline.attach(reader)
        let trackingService = TrackingService(
            reader: reader, pipeline: pipeline, powerPollInterval: .seconds(config.powerPollSeconds))
        let tracking = TrackingRuntime(tracker: tracker, recorder: recorder, reader: reader, hub: hub, pipeline: pipeline)
        let caFile = config.backendCAFile.isEmpty ? nil : config.backendCAFile
        let client = config.backendURL.isEmpty ? nil : BackendClient(baseURL: config.backendURL, caFile: caFile)
        let uplink = client.map { client in Uplink(
            client: client, webSocket: WebSocketLink(baseURL: client.baseURL, caFile: caFile, logger: Logger(label: "uplink")),
            outbox: outbox, stateDirectory: config.stateDirectory,
            credentials: config.backendUsername.isEmpty ? nil : .init(username: config.backendUsername, password: config.backendPassword),
            hub: hub, logger: Logger(label: "uplink"), isMoving: { tracker.summary.motion == .moving },
            onShift: { shift.isOn }, maxLoginAge: config.maxLoginAgeHours * 3600, clock: clock,
            heartbeat: { tracker.heartbeat() }) }
        let clockLogger = Logger(label: "clock")
        @Sendable func logClock(_ source: TimeSource, was: TimeSource?, offset: Double) {
            clockLogger.log(
                level: was == nil ? .info : .notice,
                "time stamps come from \(source.rawValue)\(was.map { " (was \($0.rawValue))" } ?? ""); the system clock is \(TextFormat.fixed(offset, decimals: 1)) s off",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.clockSource.rawValue)", "time_source": "\(source.rawValue)",
                           "system_clock_offset": "\(TextFormat.fixed(offset, decimals: 1))"])
        }
        clock.whenSourceChanges { from, to, offset in
            uplink?.clockSourceChanged()
            if let from { logClock(to, was: from, offset: offset) }
        }
        if let problem = DaemonClock.kernelStateUnreadable() {
            clockLogger.warning("cannot read whether the system clock is synchronised (\(problem)): stamps come from GPS time when it is known")
        }
        let clockAtStart = clock.status()
        logClock(clockAtStart.source, was: nil, offset: clockAtStart.systemClockOffset)
        let pushBox = PushBox(store: store)
        let pushes = PushCenter(box: pushBox, hub: hub, safety: safety, shift: shift, logger: Logger(label: "pushes"))
        safety.whenOpened { Task { await pushes.deliverHeld() } }
        hub.whenSubscribed { connection, topics in
            if topics.contains(Events.push.topic) { Task { await pushes.subscribed(connection) } }
        }
        let workflow: Workflow
        do {
            workflow = try Workflow(
                book: TaskBook(store: store), outbox: outbox, uplink: uplink, hub: hub, tracker: tracker,
                spool: PhotoSpool(stateDirectory: config.stateDirectory), pushes: pushes, shift: shift, logger: Logger(label: "workflow"))
        } catch {
            throw StartupError(description: "cannot read the tasks in the store: \(error)")
        }
        uplink?.setObserver(workflow)
        let runtime = AgentRuntime(
            started: .now, socketPath: config.socketPath, socketActivated: activated, counters: counters,
            logLevel: levelControl, tracking: tracking, uplinkStatus: { UplinkHandlers.status(uplink, outbox, clock: clock, maxAge: .seconds(1)) },
            shiftStatus: { shift.status },
            safetyStatus: { safety.status(heldPushes: pushes.heldCount.withLock { $0 }) })

        var router = RPCRouter()
        AgentHandlers.register(in: &router, runtime: runtime, logger: logger)
        DiagHandlers.register(in: &router, runtime: DiagRuntime(
            agent: runtime, config: config, configPath: configPath, configWarnings: configWarnings, store: store,
            recentWarnings: recentWarnings))
        GPSHandlers.register(in: &router, runtime: tracking, logger: Logger(label: "gps"))
        UplinkHandlers.register(in: &router, uplink: uplink, outbox: outbox, clock: clock)
        WorkflowHandlers.register(in: &router, workflow: workflow, safety: safety)
        DriverHandlers.register(
            in: &router, shift: shift, pushes: pushes, workflow: workflow, recorder: recorder,
            uplink: uplink, logger: Logger(label: "shift"))
        let dispatcher = RPCDispatcher(router: router, counters: counters, logger: Logger(label: "rpc"))
        if policy.groupID == nil {
            logger.warning("group '\(config.rpcGroup)' does not exist: only root may call mutating methods")
        }
        let server = RPCServer(
            dispatcher: dispatcher, policy: policy, counters: counters,
            configuration: RPCServerConfiguration(maxLineBytes: config.maxLineBytes), logger: Logger(label: "rpc"))
        let readiness = Readiness()
        let rpcService = RPCService(server: server, listener: listener, readiness: readiness)
        let notifierService = NotifierService(notifier: ServiceNotifier(), readiness: readiness, logger: logger) {
            let (link, motion, hz) = tracker.summary
            let depth = (try? outbox.depth(maxAge: .seconds(1))) ?? Outbox.Depth()
            return StatusLine(
                clients: counters.openConnections, link: link, motion: motion, samplingHz: hz,
                pings: recorder?.committed ?? 0, backend: uplink?.linkSummary ?? .disabled,
                queued: depth.items + depth.pings
            ).text
        }

        logger.info(
            "driverd \(DaemonVersion.current) starting",
            metadata: [
                DaemonLogHandler.messageIDKey: "\(MessageID.started.rawValue)",
                "socket": "\(config.socketPath)", "socket_activated": "\(activated)",
                "state_dir": "\(config.stateDirectory)", "gpsd": "\(config.gpsd)",
            ])
        Task {
            await readiness.waitUntilListening()
            logger.info(
                "listening on \(config.socketPath)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.listening.rawValue)", "socket": "\(config.socketPath)"])
        }

        // Graceful shutdown runs in reverse order: the notifier says STOPPING=1 first, then the server drains,
        // then tracking stops reading gpsd and commits its last pings.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                // The uplink stops after tracking (its final flush sends the last pings).
                services: (uplink.map { [ServiceGroupConfiguration.ServiceConfiguration(service: UplinkService(uplink: $0))] } ?? []) + [
                    .init(service: trackingService),
                    .init(service: WorkflowService(workflow: workflow, logger: Logger(label: "workflow"))),
                    .init(service: rpcService),
                    .init(service: notifierService),
                ],
                // SIGTERM and SIGINT come through SignalWaiter (see there why not here).
                gracefulShutdownSignals: [],
                logger: Logger(label: "lifecycle")))
        SignalWaiter.start { signal in
            logger.notice(
                "stopping on \(signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "signal \(signal)"): finishing requests, committing the last pings, flushing the outbox",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.stopping.rawValue)"])
            Task { await group.triggerGracefulShutdown() }
        }
        try await group.run()
        logger.info("driverd stopped", metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.stopped.rawValue)"])
    }

    static func logSink(for target: LogTarget) -> DaemonLogHandler.Sink {
        switch target {
        case .journal: .journal
        case .stderr: .stderr
        case .auto: Journal.stderrIsJournalStream ? .journal : .stderr
        }
    }

    /// Socket activation when systemd passed a socket, otherwise a socket of our own at the configured path.
    static func makeListener(_ config: DaemonConfig, groupID: UInt32?) throws -> (RPCListener, activated: Bool) {
        let passed = try SocketActivation.takeListeningSockets()
        if let socket = passed.first {
            guard SocketActivation.isListeningUnixStream(socket.descriptor) else {
                throw StartupError(description: "the socket passed by systemd (\(socket.name)) is not a listening Unix stream socket")
            }
            return (.inherited(descriptor: socket.descriptor), true)
        }
        // Only root can hand the socket to another group; otherwise keep the daemon user's group.
        return (.path(config.socketPath, mode: 0o660, groupID: geteuid() == 0 ? groupID : nil), false)
    }

    static func prepareStateDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw StartupError(description: "state directory \(path) is not a directory")
            }
            return
        }
        guard errno == ENOENT, mkdir(path, 0o750) == 0 else {
            throw StartupError(description: "cannot create state directory \(path): \(String(cString: strerror(errno)))")
        }
    }
}
