#if canImport(Glibc)
import Glibc
#endif
import BackendClient
import FoundationEssentials
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
        /// The process's exit status for it (1 unless said).
        public var exitStatus: Int32 = 1
    }

    /// The exit status of a start on a store that cannot be written (EX_CANTCREAT): systemd starts driverd again
    /// (`Restart=on-failure`, every `RestartSec`), and it runs once the file system is writable.
    public static let storeUnwritableStatus: Int32 = 73

    /// The store's condition in the journal: as found at start when it is not ok, then once per change (MESSAGE_ID
    /// storeHealth, with the free bytes and the path).
    static func reportStoreHealth(_ health: StoreHealth, logger: Logger) {
        let say: @Sendable (StoreStatus, Bool) -> Void = { status, atStart in
            let level: Logger.Level = switch status.condition {
            case .ok: .notice
            case .nearlyFull: .warning
            case .full, .readOnly, .failing: .error
            }
            logger.log(
                level: level, "\(atStart ? "at start: " : "")\(status.summary)\(status.detail.map { " (\($0))" } ?? "")",
                metadata: [
                    DaemonLogHandler.messageIDKey: "\(MessageID.storeHealth.rawValue)", "condition": "\(status.condition.rawValue)",
                    "free_bytes": "\(status.freeBytes.map(String.init) ?? "unknown")", "path": "\(status.path)",
                    "reserve_in_use": "\(status.reserveInUse)",
                ])
        }
        let now = health.status
        if now.condition != .ok || now.reserveInUse { say(now, true) }
        health.onChange { say($0, false) }
    }

    public enum Outcome: Sendable, Equatable {
        case stopped
        /// A remote configuration document was accepted: it runs from the next start.
        case restartToApply(version: Int)
    }

    /// Runs the daemon with `layers` (the file and the command line; the fleet's document, if any, is read from
    /// the store). Returns after a graceful stop; throws when it cannot start. `configPath` is the file the
    /// layers came from, shown (redacted) by `diag.report`.
    /// `bundleMaker` makes the support bundle the fleet may ask for: `bytes(report, windowSeconds, maxJournalLines)`.
    public static func run(
        layers: ConfigLayers, configPath: String, configWarnings: [ConfigIssue] = [],
        bundleMaker: (@Sendable (DiagReport, Double, Int) throws -> Data)? = nil
    ) async throws -> Outcome {
        let local = layers.parse().config
        let levelControl = LogLevelControl(Logger.Level(local.logLevel))
        let sink = logSink(for: local.logTarget)
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

        try prepareStateDirectory(local.stateDirectory)
        let store: Store
        do {
            store = try Store(directory: local.stateDirectory, reserveBytes: Int64(local.storageReserveMB) << 20)
        } catch {
            // A read-only or full disk at start is said as what it is, in one line (PostgreSQL's way), not as SQLite's code.
            if let condition = StoreHealth.condition(of: error) {
                let status = StoreHealth(directory: local.stateDirectory, reserveBytes: 0).check()
                logger.critical(
                    "the store cannot start: \(StoreStatus(condition: condition, path: local.stateDirectory, freeBytes: status.freeBytes).summary)",
                    metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.storeHealth.rawValue)", "condition": "\(condition.rawValue)"])
                throw StartupError(
                    description: "the store in \(local.stateDirectory) cannot be opened: storage \(condition.rawValue) (\(Store.describeWriteFailure(error)))",
                    exitStatus: Self.storeUnwritableStatus)
            }
            throw StartupError(description: "cannot open the store in \(local.stateDirectory): \(error)")
        }
        Self.reportStoreHealth(store.health, logger: Logger(label: "store"))
        // The fleet's document on top of the file (none changes where the store is).
        let remote = try RemoteConfigStart.resolve(book: RemoteConfigBook(store: store), layers: layers, clock: clock, logger: Logger(label: "config"))
        let config = remote.config
        levelControl.set(Logger.Level(config.logLevel))
        #if DEBUG
        // Fault injection for the rollback test (debug builds only): a document that kills the daemon at every start.
        if remote.onTrial, let version = remote.running,
           ProcessInfo.processInfo.environment["DRIVERD_TEST_FAULT_CRASH_WITH_REMOTE_VERSION"] == String(version) {
            logger.critical("test fault: crashing at start with remote configuration v\(version)")
            abort()
        }
        #endif
        let policy = PeerAccessPolicy.resolving(groupName: config.rpcGroup)
        let (listener, activated) = try makeListener(config, groupID: policy.groupID)
        let caFile = config.backendCAFile.isEmpty ? nil : config.backendCAFile
        let backend = config.backendURL.isEmpty ? nil : BackendClient(baseURL: config.backendURL, caFile: caFile)
        let webSocket = backend.map { WebSocketLink(
            baseURL: $0.baseURL, caFile: caFile, keepalive: .milliseconds(Int64(config.uplinkKeepaliveSeconds * 1000)), logger: Logger(label: "uplink")) }
        // TLS judges the backend's certificate by the system clock; while nothing vouches for that clock, by what is known.
        let judging = CertificateJudging(caFile: caFile) { clock.certificateTime() }
        backend?.judgeCertificates(judging, tunnelDirectory: config.stateDirectory)
        webSocket?.judgeCertificates(judging)
        let (identity, enrolment) = try unitIdentity(config, backend: backend, webSocket: webSocket, clock: clock)
        let daemon = try DaemonAssembly.make(DaemonAssembly.Inputs(
            config: config, configPath: configPath, configWarnings: configWarnings, remote: remote, bundleMaker: bundleMaker, store: store,
            backend: backend, webSocket: webSocket, identity: identity, clock: clock,
            levelControl: levelControl, recentWarnings: recentWarnings, socketActivated: activated))
        // A new certificate (enrolled, renewed) ends the uplink's waits that its absence caused.
        backend?.whenIdentityPresented { [weak uplink = daemon.uplink] in uplink?.identityChanged() }
        if policy.groupID == nil {
            logger.warning("group '\(config.rpcGroup)' does not exist: only root may call mutating methods")
        }
        let dispatcher = RPCDispatcher(router: daemon.router, counters: daemon.counters, logger: Logger(label: "rpc"))
        let server = RPCServer(
            dispatcher: dispatcher, policy: policy, counters: daemon.counters,
            configuration: RPCServerConfiguration(maxLineBytes: config.maxLineBytes), logger: Logger(label: "rpc"))
        let readiness = Readiness()
        logger.info(
            "driverd \(DaemonVersion.current) starting",
            metadata: [
                DaemonLogHandler.messageIDKey: "\(MessageID.started.rawValue)",
                "socket": "\(config.socketPath)", "socket_activated": "\(activated)",
                "state_dir": "\(config.stateDirectory)", "gpsd": "\(config.gpsd)",
            ])

        // Graceful shutdown runs in reverse order: the notifier says STOPPING=1 first, then the server drains,
        // then the push centre, the workflow and tracking stop (tracking commits its last pings), and the uplink's
        // final flush sends them. SIGTERM or SIGINT end the signal service, and with it the group, gracefully.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: daemon.services + (enrolment.map { [ServiceGroupConfiguration.ServiceConfiguration(service: $0, successTerminationBehavior: .ignore)] } ?? []) + [
                    .init(service: RPCService(server: server, listener: listener, readiness: readiness, socketPath: config.socketPath, logger: logger)),
                    .init(service: NotifierService(notifier: ServiceNotifier(), readiness: readiness, logger: logger) { daemon.statusLine() }),
                    .init(service: SignalService(signals: SignalWaiter.signals(), logger: logger), successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                // SIGTERM and SIGINT come through SignalWaiter (see there why not here).
                gracefulShutdownSignals: [],
                logger: Logger(label: "lifecycle")))
        try await group.run()
        logger.info("driverd stopped", metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.stopped.rawValue)"])
        return daemon.remoteConfig.restartFor.withLock { $0 }.map { .restartToApply(version: $0) } ?? .stopped
    }

    /// The unit's key (made at its first start) and certificate, presented when there is one; the service that
    /// enrols (with a claim token) and renews.
    static func unitIdentity(
        _ config: DaemonConfig, backend: BackendClient?, webSocket: WebSocketLink?, clock: DaemonClock
    ) throws -> (UnitIdentity?, IdentityService?) {
        guard let backend else { return (nil, nil) }
        let logger = Logger(label: "identity")
        let identity: UnitIdentity
        do {
            let directory = config.stateDirectory + "/identity"
            let keyStore = try UnitKeyStore.choose(setting: config.backendTPM, directory: directory, logger: logger)
            identity = try UnitIdentity(directory: directory, keyStore: keyStore, claimTokenConfigured: !config.backendClaimToken.isEmpty)
        } catch {
            throw StartupError(description: "the unit's identity: \(error)")
        }
        if try IdentityService.present(identity, client: backend, webSocket: webSocket), let facts = identity.facts {
            logger.info(
                "presenting the unit's certificate (its key: \(identity.keyStore.description))",
                metadata: ["subject": "\(facts.subject)", "serial": "\(facts.serial)", "not_after": "\(Int(facts.notAfter))"])
        } else if config.backendClaimToken.isEmpty {
            logger.info("not enrolled (no backend.claim_token): the backend knows this unit by backend.username and password or a driver's login only")
            return (identity, nil)
        }
        return (identity, IdentityService(
            identity: identity, claimToken: config.backendClaimToken, client: backend, webSocket: webSocket, clock: clock,
            spreadWindow: config.spreadWindowSeconds, logger: logger))
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
