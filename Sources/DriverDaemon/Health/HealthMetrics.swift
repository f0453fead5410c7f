import DriverAPI

/// The health report as node_exporter's textfile collector reads it (the Prometheus text format, `# EOF` ended as in
/// OpenMetrics), with the names and types an exporter would use. Written from the one report, not kept as a second
/// model of the same values: hand-made lines instead of swift-prometheus, whose registry would hold them twice and add
/// to the binary for a file of thirty lines. Nothing here changes every minute on a quiet unit (no uptime, no
/// timestamps: `driverd_start_time_seconds` instead), so an unchanged unit writes nothing.
enum HealthMetrics {
    /// The start time the file says: the one said before unless the clock stepped (more than `startTimeSlack`). The
    /// wall clock minus the monotonic uptime wanders by a second or two between reports (a GPS-timed clock's own
    /// jitter, NTP slewing), and each wander would rewrite the file (measured: every minute on a parked unit).
    static func startTime(_ health: UnitHealth, said: Double?) -> Double {
        let measured = (health.generatedAt - health.uptimeSeconds).rounded()
        if let said, abs(said - measured) <= startTimeSlack { return said }
        return measured
    }

    static let startTimeSlack = 5.0

    /// `startTime`: from `startTime(_:said:)`.
    static func text(_ health: UnitHealth, startTime: Double) -> String {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: [(String, String)], value: Double)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for sample in samples {
                let labels = sample.labels.isEmpty ? "" : "{" + sample.labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
                lines.append("\(name)\(labels) \(format(sample.value))")
            }
        }
        metric("driverd_info", "gauge", "The daemon's and the screen's versions.", [
            ([("version", health.daemonVersion), ("kiosk_version", health.kioskVersion ?? "")], 1),
        ])
        metric("driverd_start_time_seconds", "gauge", "When the daemon started, Unix seconds.", [([], startTime)])
        let causes = Dictionary(grouping: health.restarts, by: \.cause)
        metric("driverd_restarts_last_day", "gauge", "Runs of the last 24 hours by how they ended.",
               UnitHealth.RestartCause.allCases.map { ([("cause", $0.rawValue)], Double(causes[$0]?.count ?? 0)) })
        metric("driverd_store_condition", "gauge", "The state directory's condition (1 for the current one).",
               StoreStatus.Condition.allCases.map { ([("condition", $0.rawValue)], $0 == health.store.condition ? 1 : 0) })
        metric("driverd_store_can_save", "gauge", "Whether the driver's next change can be saved.", [([], health.store.canSave ? 1 : 0)])
        // To the MiB below: the exact figure moves with every write on the disk, and would rewrite the file each minute.
        if let free = health.store.freeBytes {
            metric("driverd_store_free_bytes", "gauge", "Free bytes for the daemon on the state directory, to the MiB.", [([], Double((free >> 20) << 20))])
        }
        metric("driverd_outbox_items", "gauge", "Items waiting to be sent (transitions, proofs, reports).", [([], Double(health.queue.items))])
        metric("driverd_outbox_pings", "gauge", "Pings waiting to be sent.", [([], Double(health.queue.pings))])
        metric("driverd_outbox_dead_letters", "gauge", "Items the backend refused, kept.", [([], Double(health.queue.deadLetters))])
        if let age = health.queue.oldestAgeSeconds {
            // To the minute: a draining queue's age would change the file every minute for no one.
            metric("driverd_outbox_oldest_age_minutes", "gauge", "How long the oldest waiting item or ping has waited.", [([], (age / 60).rounded(.down))])
        }
        metric("driverd_gps_link", "gauge", "The receiver's link (1 for the current state).",
               GPSLinkState.allCases.map { ([("state", $0.rawValue)], $0 == health.gps.link ? 1 : 0) })
        metric("driverd_on_shift", "gauge", "Whether a shift is on.", [([], health.onShift ? 1 : 0)])
        metric("driverd_clock_source", "gauge", "Where time stamps come from (1 for the current source).",
               TimeSource.allCases.map { ([("source", $0.rawValue)], $0 == health.clockSource ? 1 : 0) })
        if let certificate = health.certificate {
            metric("driverd_certificate_state", "gauge", "The unit's certificate (1 for the current state).",
                   UnitIdentityStatus.State.allCases.map { ([("state", $0.rawValue)], $0 == certificate.state ? 1 : 0) })
            if let notAfter = certificate.notAfter {
                metric("driverd_certificate_expiry_timestamp_seconds", "gauge", "When the unit's certificate expires.", [([], notAfter)])
            }
        }
        if let vehicle = health.vehicle {
            metric("driverd_vehicle_link", "gauge", "The OBD-II adapter's link.", [([("state", vehicle.link)], 1)])
            if let volts = vehicle.batteryVolts {
                metric("driverd_vehicle_battery_volts", "gauge", "The vehicle's 12 V battery at the adapter.", [([], (volts * 10).rounded() / 10)])
            }
        }
        metric("driverd_front_ends", "gauge", "Front ends connected to the local socket.", [([], Double(health.frontEnds))])
        if let version = health.remoteConfigVersion {
            metric("driverd_remote_config_version", "gauge", "The fleet's configuration document in force.", [([], Double(version))])
        }
        lines.append("# EOF")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private static func escape(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }
}
