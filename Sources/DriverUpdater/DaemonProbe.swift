import DriverAPI
import DriverDomain
import JSONRPC
import Spawn

/// One look at the running driverd for the health gate: what systemd says of its unit, and whether it answers on
/// its socket and reaches the backend.
struct DaemonProbe {
    let unit: String
    /// driverd's socket; nil for a unit without one (its running is its answer).
    let socketPath: String?

    struct Unit {
        var activeState = ""
        var subState = ""
        var mainPID = 0
        var restarts = 0
        /// systemd's result of the unit's last run (`success`, `exit-code`, `signal`, `timeout`, ...).
        var result = ""
        /// When it last reached active, CLOCK_MONOTONIC seconds; nil for never.
        var activeSince: Double?
    }

    /// What systemd says of the unit; throws when `systemctl show` cannot be run or fails (the look is then
    /// taken again: a failed look is no sign of a failed daemon).
    func unitState() throws -> Unit {
        let shown = try ChildProcess.run(
            "/bin/systemctl", ["show", unit, "-p", "ActiveState", "-p", "SubState", "-p", "MainPID", "-p", "NRestarts", "-p", "Result", "-p", "ActiveEnterTimestampMonotonic"])
        guard shown.status == 0 else { throw UpdaterError("systemctl show \(unit) exited with \(shown.status)") }
        var state = Unit()
        for line in shown.output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "ActiveState": state.activeState = parts[1]
            case "SubState": state.subState = parts[1]
            case "MainPID": state.mainPID = Int(parts[1]) ?? 0
            case "NRestarts": state.restarts = Int(parts[1]) ?? 0
            case "Result": state.result = parts[1]
            case "ActiveEnterTimestampMonotonic": state.activeSince = Double(parts[1]).flatMap { $0 > 0 ? $0 / 1e6 : nil }
            default: break
            }
        }
        return state
    }

    /// Whether the daemon reaches its backend now (its WebSocket is up, or its last send succeeded); nil when it
    /// does not answer. With nothing to send the link stays `idle`, so the WebSocket counts.
    func backendOnline() -> Bool? {
        // Not answering is the expected "nil" the health gate counts.
        guard let socketPath, let client = try? RPCClient(socketPath: socketPath, timeout: .seconds(5)),
              let status = try? client.call(Methods.outboxStatus, NoParams())
        else { return nil }
        return status.link == .online || status.transport == .websocket
    }

    /// The probe the gate judges; `restartsBefore`: NRestarts when the new package was installed.
    func probe(restartsBefore: Int) throws -> HealthGate.Probe {
        let unit = try unitState()
        let running = unit.activeState == "active" && unit.subState == "running"
        let online = socketPath == nil ? nil : backendOnline()
        return HealthGate.Probe(
            running: running,
            crashed: unit.activeState == "failed" || unit.subState == "auto-restart" || unit.restarts > restartsBefore,
            timedOut: unit.result == "timeout", exited: ["exit-code", "signal", "core-dump"].contains(unit.result), activeSince: unit.activeSince,
            mainPID: unit.mainPID, answers: socketPath == nil ? running : online != nil, backendOnline: online == true)
    }
}
