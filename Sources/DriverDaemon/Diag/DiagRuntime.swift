import DriverAPI
import DriverDomain
import DriverStore
import GPSKit
import JSONRPC

/// The `diag.*` methods' owner: what `diag.report` needs beyond `agent.status`, fixed at start-up.
struct DiagRuntime: MethodOwner, Sendable {
    let agent: AgentRuntime
    let config: DaemonConfig
    let configPath: String
    let configWarnings: [ConfigIssue]
    let store: Store
    let recentWarnings: RecentWarnings
    let vehicle: @Sendable () -> VehicleStatus
}

extension DiagRuntime {
    func register(in router: inout RPCRouter) {
        router.register(Methods.diagReport) { [self] _, _ in try report() }
    }

    func report() throws -> DiagReport {
        let runtime = self
        let (warnings, total) = runtime.recentWarnings.snapshot
        let sqlite: String
        do {
            sqlite = try runtime.store.sqliteVersion()
        } catch {
            sqlite = "unreadable: \(Store.describeWriteFailure(error))"
        }
        var storage = SystemInfo.storage(stateDirectory: runtime.config.stateDirectory, databasePath: runtime.store.path)
        do {
            let (count, newest) = try runtime.store.setAsideRows(limit: 5)
            if count > 0 {
                storage.setAsideRows = count
                storage.setAside = newest.map { SetAsideSummary(table: $0.tableName, at: $0.setAsideAt, reason: $0.reason) }
            }
        } catch {
            storage.setAside = [SetAsideSummary(table: "set_aside_row", at: 0, reason: "unreadable: \(Store.describeWriteFailure(error))")]
        }
        return DiagReport(
            generatedAt: runtime.agent.tracking.tracker.clock.now().time,
            versions: DiagVersions(
                daemon: DaemonVersion.current, api: "\(APIVersion.major).\(APIVersion.minor)", sqlite: sqlite,
                libgps: LibGPSVersion.api, kernel: SystemInfo.kernel(), os: SystemInfo.operatingSystem()),
            status: runtime.agent.status(),
            storage: storage,
            config: DiagConfig(
                path: runtime.configPath, effective: runtime.config.effectiveValues,
                warnings: runtime.configWarnings.map(\.description),
                fileText: SystemInfo.readSmallFile(runtime.configPath).map(ConfigRedaction.redact)),
            warnings: warnings, warningsTotal: total, vehicle: runtime.vehicle())
    }
}
