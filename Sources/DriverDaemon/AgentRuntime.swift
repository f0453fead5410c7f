import DriverAPI
import DriverStore
import JSONRPC
import Logging

/// The `agent.*` methods' owner: what they report on, fixed at start-up.
struct AgentRuntime: MethodOwner, Sendable {
    let started: ContinuousClock.Instant
    let socketPath: String
    let socketActivated: Bool
    let counters: RPCCounters
    let logLevel: LogLevelControl
    let tracking: TrackingRuntime
    let uplinkStatus: @Sendable () throws -> OutboxStatus
    let shiftStatus: @Sendable () -> ShiftStatus
    let safetyStatus: @Sendable () -> SafetyStatus
    let identityStatus: @Sendable () -> UnitIdentityStatus?
    /// The store's condition, looked at again (a statvfs) for each status: a disk freed or remounted shows at once.
    let storeStatus: @Sendable () -> StoreStatus
    /// `agent.health`: the health desk's answer.
    let health: @Sendable () -> AgentHealth
    let logger: Logger

    func register(in router: inout RPCRouter) {
        router.register(Methods.agentDescribe) { _, _ in
            AgentDescription(apiMajor: APIVersion.major, apiMinor: APIVersion.minor, daemonVersion: DaemonVersion.current)
        }
        router.register(Methods.agentStatus) { [self] _, _ in status() }
        router.register(Methods.agentHealth) { [self] _, _ in health() }
        router.register(Methods.agentSetLogLevel) { [self] params, connection in
            let previous = logLevel.set(Logger.Level(params.level))
            logger.notice(
                "log level changed",
                metadata: [
                    DaemonLogHandler.messageIDKey: "\(MessageID.logLevelChanged.rawValue)",
                    "from": "\(previous)", "to": "\(params.level.rawValue)", "peer_uid": "\(connection.peer.uid)",
                ])
            return SetLogLevelResult(previous: previous.apiLevel, current: params.level)
        }
    }

    func status() -> AgentStatus {
        let runtime = self
        let uptime = ContinuousClock.now - runtime.started
        // A store that cannot be read leaves the rest of the status standing: the outbox section says why it is empty.
        let uplink: OutboxStatus?
        let outbox: SectionAvailability
        do {
            uplink = try runtime.uplinkStatus()
            outbox = SectionAvailability(available: true)
        } catch {
            uplink = nil
            outbox = SectionAvailability(available: false, reason: "the outbox cannot be read: \(Store.describeWriteFailure(error))")
        }
        let (seconds, attoseconds) = uptime.components
        return AgentStatus(
            daemonVersion: DaemonVersion.current,
            apiMajor: APIVersion.major,
            apiMinor: APIVersion.minor,
            uptimeSeconds: Double(seconds) + Double(attoseconds) / 1e18,
            rpc: RPCSection(
                socketPath: runtime.socketPath, socketActivated: runtime.socketActivated,
                openConnections: runtime.counters.openConnections, requestsServed: runtime.counters.requestsServed),
            gps: runtime.tracking.gpsStatus(),
            sampling: runtime.tracking.tracker.samplingStatus(),
            outbox: outbox,
            link: SectionAvailability(available: true),
            shift: SectionAvailability(available: true),
            uplink: uplink, shiftStatus: runtime.shiftStatus(), safety: runtime.safetyStatus(),
            clock: runtime.tracking.tracker.clock.status(), identity: runtime.identityStatus(), store: runtime.storeStatus())
    }
}
