import DriverAPI
import DriverStore
import JSONRPC
import Logging

/// What the `agent.*` methods report on, fixed at start-up.
struct AgentRuntime: Sendable {
    let started: ContinuousClock.Instant
    let socketPath: String
    let socketActivated: Bool
    let counters: RPCCounters
    let logLevel: LogLevelControl
    let tracking: TrackingRuntime
    let uplinkStatus: @Sendable () throws -> OutboxStatus
    let shiftStatus: @Sendable () -> ShiftStatus
    let safetyStatus: @Sendable () -> SafetyStatus
}

/// The `agent.*` methods.
enum AgentHandlers {
    static func register(in router: inout RPCRouter, runtime: AgentRuntime, logger: Logger) {
        router.register(Methods.agentDescribe) { _, _ in
            AgentDescription(apiMajor: APIVersion.major, apiMinor: APIVersion.minor, daemonVersion: DaemonVersion.current)
        }
        router.register(Methods.agentStatus) { _, _ in
            status(runtime)
        }
        router.register(Methods.agentSetLogLevel) { params, connection in
            let previous = runtime.logLevel.set(Logger.Level(params.level))
            logger.notice(
                "log level changed",
                metadata: [
                    DaemonLogHandler.messageIDKey: "\(MessageID.logLevelChanged.rawValue)",
                    "from": "\(previous)", "to": "\(params.level.rawValue)", "peer_uid": "\(connection.peer.uid)",
                ])
            return SetLogLevelResult(previous: previous.apiLevel, current: params.level)
        }
    }

    static func status(_ runtime: AgentRuntime) -> AgentStatus {
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
            clock: runtime.tracking.tracker.clock.status())
    }
}
