import DriverAPI
import JSONRPC

/// Human text for people, JSON for scripts.
struct Output {
    let json: Bool

    init(_ options: GlobalOptions) { json = options.json }

    func emit<Value: Encodable>(_ value: Value, text: () -> String) throws {
        if json {
            print(String(decoding: try Codec.encode(value), as: UTF8.self))
        } else {
            print(text())
        }
    }
}

enum StatusFormatter {
    static func text(_ status: AgentStatus) -> String {
        var lines = ["driverd \(status.daemonVersion) (API \(status.apiMajor).\(status.apiMinor)), up \(duration(status.uptimeSeconds))"]
        let rpc = status.rpc
        let activation = rpc.socketActivated ? ", socket-activated" : ""
        lines.append(row("rpc", "\(rpc.socketPath)\(activation); \(plural(rpc.openConnections, "client")), \(plural(rpc.requestsServed, "request")) served"))
        lines.append(row("gps", GPSFormatter.summary(status.gps)))
        lines.append(row("sampling", GPSFormatter.sampling(status.sampling, motion: status.gps.motion)))
        if let clock = status.clock { lines.append(row("clock", ClockFormatter.text(clock))) }
        if let uplink = status.uplink {
            lines.append(row("backend", uplink.enabled ? "\(uplink.link.rawValue), \(plural(uplink.items + uplink.pings, "item")) queued" : "not configured"))
        } else if !status.outbox.available {
            lines.append(row("outbox", "not available: \(status.outbox.reason ?? "no reason given")"))
        }
        if let identity = status.identity { lines.append(row("unit", identityText(identity))) }
        if let store = status.store { lines.append(row("store", storeText(store))) }
        if let shift = status.shiftStatus {
            lines.append(row("shift", ShiftCommand.text(shift)))
        } else {
            lines.append(row("shift", status.shift.available ? "available" : "not available: \(status.shift.reason ?? "no reason given")"))
        }
        if let safety = status.safety {
            let gate = safety.state == .stationary ? "actions open" : "pull over to complete"
            let state = switch safety.state {
            case .moving: "moving at \(TextFormat.fixed(safety.speed ?? 0, decimals: 1)) m/s"
            case .unknown: "speed unknown"
            case .stationary, .stopping: safety.state.rawValue
            }
            lines.append(row("safety", "\(state): \(gate)" + (safety.heldPushes > 0 ? "; \(plural(safety.heldPushes, "push")) held" : "")))
        }
        return lines.joined(separator: "\n")
    }

    /// The store's condition in the words every layer uses, with what the system said of the last failure.
    static func storeText(_ store: StoreStatus) -> String {
        var text = store.summary
        if store.condition == .ok, store.reserveInUse { text += "; the reserve for the driver's changes is in use" }
        if let detail = store.detail, !store.canSave { text += " (\(detail))" }
        return text
    }

    /// The unit's certificate, or why it has none yet.
    static func identityText(_ identity: UnitIdentityStatus) -> String {
        switch identity.state {
        case .enrolled:
            "enrolled as \(identity.subject ?? "?"), serial \(identity.serial ?? "?"), expires \(identity.notAfter.map { TextFormat.UTC($0).iso8601 } ?? "?")"
                + (identity.reason.map { "; not renewed: \($0)" } ?? "")
        case .enrolling: "enrolling with the claim token" + (identity.reason.map { ": \($0)" } ?? "")
        case .refused:
            identity.subject == nil
                ? "enrolment refused: \(identity.reason ?? "no reason given"); check backend.claim_token"
                : "renewal of \(identity.subject ?? "?") refused: \(identity.reason ?? "no reason given")"
        case .revoked: "revoked by the fleet (\(identity.subject ?? "?")): \(identity.reason ?? "no reason given"); everything stays queued"
        }
    }

    static func row(_ name: String, _ value: String) -> String {
        name + String(repeating: " ", count: max(1, 10 - name.count)) + value
    }

    static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds)
        let (days, hours, minutes, secs) = (total / 86400, total / 3600 % 24, total / 60 % 60, total % 60)
        if days > 0 { return "\(days)d \(hours)h \(minutes)m" }
        if hours > 0 { return "\(hours)h \(minutes)m" }
        if minutes > 0 { return "\(minutes)m \(secs)s" }
        return "\(secs)s"
    }
}
