#if canImport(Glibc)
import Glibc
#endif
import DriverAPI

/// How GPS state reads for a person.
enum GPSFormatter {
    static func summary(_ gps: GPSStatus) -> String {
        var text = "\(gps.link) (gpsd \(gps.gpsd))"
        if let age = gps.lastFixAge { text += ", last fix \(seconds(age)) ago" } else { text += ", no fix yet" }
        text += "; \(gps.fixesSeen) fixes, \(gps.pingsRecorded) pings recorded"
        if !gps.tracking { text += " (tracking off)" }
        return text
    }

    static func sampling(_ sampling: SamplingStatus, motion: String) -> String {
        var text = "\(motion) at \(rate(sampling.samplingHz))"
        if sampling.samplingHz != sampling.policyHz { text += " (policy \(rate(sampling.policyHz)))" }
        text += ", battery \(sampling.batteryMode), gpsd watch \(sampling.watch)"
        if let ignition = sampling.ignition { text += ", ignition \(ignition)" }
        if !sampling.requests.isEmpty {
            text += "; requests: " + sampling.requests.map { "pid \($0.pid) \(rate($0.hz))" }.joined(separator: ", ")
        }
        return text
    }

    static func details(_ gps: GPSStatus) -> String {
        var lines = [
            StatusFormatter.row("link", "\(gps.link) (gpsd \(gps.gpsd))"),
            StatusFormatter.row("motion", gps.motion),
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
        lines.append(StatusFormatter.row("tracking", gps.tracking ? "on" : "off"))
        if let error = gps.lastError { lines.append(StatusFormatter.row("error", error)) }
        return lines.joined(separator: "\n")
    }

    /// `52.520000, 13.405000 ±5 m 3D 9 sats 12.3 m/s 87°`
    static func fixLine(_ fix: Fix) -> String {
        var parts = [format(fix.latitude, 6) + ", " + format(fix.longitude, 6)]
        if let error = fix.horizontalError { parts.append("±\(Int(error.rounded())) m") }
        parts.append("\(fix.mode)D")
        if let satellites = fix.satellitesUsed { parts.append("\(satellites) sats") }
        if let speed = fix.speed { parts.append(format(speed, 1) + " m/s") }
        if let track = fix.track { parts.append("\(Int(track.rounded()))°") }
        return parts.joined(separator: " ")
    }

    static func rate(_ hz: Double) -> String {
        if hz >= 1 { return "\(format(hz, hz == hz.rounded() ? 0 : 1)) Hz" }
        let period = 1 / hz
        if abs(period - period.rounded()) < 0.01, period >= 10 { return "1/\(Int(period.rounded())) Hz" }
        return "\(format(hz, 2)) Hz"
    }

    static func seconds(_ value: Double) -> String { value < 10 ? format(value, 1) + " s" : StatusFormatter.duration(value) }

    static func format(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (abs(value) * scale).rounded()
        let whole = Int64(rounded / scale)
        var fraction = String(Int64(rounded) % Int64(scale))
        fraction = String(repeating: "0", count: max(0, decimals - fraction.count)) + fraction
        return (value < 0 && rounded != 0 ? "-" : "") + "\(whole)" + (decimals > 0 ? "." + fraction : "")
    }

    static func utc(_ time: Double) -> String {
        var seconds = time_t(time.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
