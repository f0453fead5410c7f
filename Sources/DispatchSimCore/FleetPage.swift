import BackendContract
import DriverAPI
import DriverDomain
import Foundation

/// `/fleet`: the fleet view as an operator reads it at a glance: one table, the units needing attention first, each
/// with its reasons in words. Plain HTML made here (no script, no external resource): it works in any browser, a
/// screen reader reads it as a table, and a test reads what an operator reads.
public enum FleetPage {
    public static func html(_ view: FleetHealthView) -> String {
        let attention = view.units.count { $0.needsAttention }
        var rows = ""
        for unit in view.units {
            let health = unit.health
            let state = unit.needsAttention ? "Needs attention" : unit.findings.isEmpty ? "OK" : "Notice"
            let reasons = unit.findings.isEmpty ? "—"
                : "<ul>" + unit.findings.map { "<li>\(escape($0.words))</li>" }.joined() + "</ul>"
            let store = health.store.condition == .ok ? "ok" : health.store.condition.rawValue
            let gps = health.gps.link.rawValue + (health.gps.lastFixAgeSeconds.map { ", fix \(HealthRules.duration($0)) old" } ?? "")
            rows += """
                <tr class="\(unit.needsAttention ? "attention" : unit.findings.isEmpty ? "ok" : "notice")">
                <th scope="row">\(escape(unit.unit))</th><td>\(state)</td><td>\(reasons)</td>\
                <td>\(HealthRules.duration(view.generatedAt - unit.lastHeard)) ago</td><td>\(escape(health.daemonVersion))</td>\
                <td>\(escape(store))</td><td>\(escape(gps))</td><td>\(health.queue.items) items, \(health.queue.pings) pings</td>
                </tr>

                """
        }
        let release = view.fleetRelease.map { " The fleet's release: driverd \(escape($0))." } ?? ""
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Fleet health: \(attention) of \(view.units.count) units need attention</title>
            <style>
            body { font: 16px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1a1a1a; background: #fff; }
            table { border-collapse: collapse; width: 100%; }
            caption { text-align: left; font-weight: 600; padding-bottom: .5rem; }
            th, td { border-bottom: 1px solid #bbb; padding: .4rem .6rem; text-align: left; vertical-align: top; }
            thead th { background: #eee; }
            tbody th { white-space: nowrap; }
            tr.attention th, tr.attention td { background: #fde8e8; }
            tr.attention td:nth-child(2) { color: #8a0000; font-weight: 700; }
            tr.notice td:nth-child(2) { color: #6b4a00; font-weight: 600; }
            ul { margin: 0; padding-left: 1.1rem; }
            </style>
            </head>
            <body>
            <main>
            <h1>Fleet health</h1>
            <p>\(attention) of \(view.units.count) units need attention. Newest report of each unit, as of \(stamp(view.generatedAt)) UTC.\(release)</p>
            <table>
            <caption>Units, those needing attention first</caption>
            <thead><tr><th scope="col">Unit</th><th scope="col">State</th><th scope="col">Why</th><th scope="col">Last heard</th>\
            <th scope="col">driverd</th><th scope="col">Store</th><th scope="col">GPS</th><th scope="col">Queue</th></tr></thead>
            <tbody>
            \(rows)</tbody>
            </table>
            </main>
            </body>
            </html>

            """
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func stamp(_ time: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime]
        return formatter.string(from: Date(timeIntervalSince1970: time)).replacingOccurrences(of: "T", with: " ")
    }
}
