import DriverAPI

/// How GPS state reads for a person.
enum GPSFormatter {
    static func summary(_ gps: GPSStatus) -> String {
        var text = "\(gps.link.rawValue) (gpsd \(gps.gpsd))"
        if let age = gps.lastFixAge { text += ", last fix \(seconds(age)) ago" } else { text += ", no fix yet" }
        text += "; \(gps.fixesSeen) fixes, \(gps.pingsRecorded) pings recorded"
        if !gps.tracking { text += " (tracking off)" }
        return text
    }

    static func sampling(_ sampling: SamplingStatus, motion: Motion) -> String {
        var text = "\(motion.rawValue) at \(TextFormat.rate(sampling.samplingHz))"
        if sampling.samplingHz != sampling.policyHz { text += " (policy \(TextFormat.rate(sampling.policyHz)))" }
        text += ", battery \(sampling.batteryMode.rawValue), gpsd watch \(sampling.watch.rawValue)"
        if let ignition = sampling.ignition { text += ", ignition \(ignition.rawValue)" }
        if !sampling.requests.isEmpty {
            text += "; requests: " + sampling.requests.map { "pid \($0.pid) \(TextFormat.rate($0.hz))" }.joined(separator: ", ")
        }
        return text
    }

    static func details(_ gps: GPSStatus) -> String {
        var lines = [
            StatusFormatter.row("link", "\(gps.link.rawValue) (gpsd \(gps.gpsd))"),
            StatusFormatter.row("motion", gps.motion.rawValue),
        ]
        if let fix = gps.lastFix {
            lines.append(StatusFormatter.row("fix", fixLine(fix)))
            if let age = gps.lastFixAge { lines.append(StatusFormatter.row("", "\(seconds(age)) ago, at \(utc(fix.time))")) }
        } else {
            lines.append(StatusFormatter.row("fix", "none yet"))
        }
        let byMotion = gps.pingsByMotion.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append(StatusFormatter.row("counters", "\(gps.fixesSeen) fixes seen, \(gps.pingsRecorded) pings recorded"
            + (byMotion.isEmpty ? "" : " (\(byMotion))") + ", \(gps.pingsPending) pending"))
        if let quality = quality(gps) { lines.append(StatusFormatter.row("quality", quality)) }
        lines.append(StatusFormatter.row("tracking", gps.tracking ? "on" : "off"))
        if let error = gps.lastError { lines.append(StatusFormatter.row("error", error)) }
        return lines.joined(separator: "\n")
    }

    /// `1190 accepted; rejected: jump 1, time 12; 0 re-anchors` (nil from a daemon before API 1.6).
    static func quality(_ gps: GPSStatus) -> String? {
        guard let accepted = gps.fixesAccepted else { return nil }
        let rejected = (gps.fixesRejected ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        return "\(accepted) accepted; rejected: " + (rejected.isEmpty ? "none" : rejected.joined(separator: ", "))
            + "; \(StatusFormatter.plural(gps.reanchors ?? 0, "re-anchor"))"
    }

    /// `52.520000, 13.405000 ±5 m 3D 9 sats 12.3 m/s 87°`
    static func fixLine(_ fix: Fix) -> String {
        var parts = [TextFormat.fixed(fix.latitude, decimals: 6) + ", " + TextFormat.fixed(fix.longitude, decimals: 6)]
        if let error = fix.horizontalError { parts.append("±\(Int(error.rounded())) m") }
        parts.append("\(fix.mode)D")
        if let satellites = fix.satellitesUsed { parts.append("\(satellites) sats") }
        if let speed = fix.speed { parts.append(TextFormat.fixed(speed, decimals: 1) + " m/s") }
        if let track = fix.track { parts.append("\(Int(track.rounded()))°") }
        return parts.joined(separator: " ")
    }

    static func seconds(_ value: Double) -> String { value < 10 ? TextFormat.fixed(value, decimals: 1) + " s" : StatusFormatter.duration(value) }

    static func utc(_ time: Double) -> String { TextFormat.UTC(time).iso8601 }
}
