import ArgumentParser
import DriverAPI

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what the daemon is doing.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let status = try Session(options).call(Methods.agentStatus, NoParams())
        try Output(options).emit(status) { StatusFormatter.text(status) }
    }
}

struct Health: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the unit's health as the office sees it: what is wrong first, then the report.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let health = try Session(options).call(Methods.agentHealth, NoParams())
        try Output(options).emit(health) { HealthFormatter.text(health) }
    }
}

/// The unit's health for a technician: what is wrong first, in the words of docs/OPERATIONS.md, then the rows.
enum HealthFormatter {
    static func text(_ agent: AgentHealth) -> String {
        let health = agent.health
        var lines: [String] = []
        if agent.findings.isEmpty {
            lines.append("nothing wrong")
        } else {
            for finding in agent.findings {
                lines.append("\(finding.severity == .attention ? "ATTENTION" : "notice   ") \(finding.words)")
            }
        }
        lines.append("")
        let kiosk = health.kioskVersion.map { ", screen \($0)" } ?? ""
        lines.append(StatusFormatter.row("versions", "driverd \(health.daemonVersion)\(kiosk)"))
        lines.append(StatusFormatter.row("up", StatusFormatter.duration(health.uptimeSeconds) + (health.onShift ? ", on shift" : ", off shift")))
        let restarts = health.restarts.isEmpty ? "none in 24 h"
            : Dictionary(grouping: health.restarts, by: \.cause).sorted { $0.key.rawValue < $1.key.rawValue }
                .map { "\($0.value.count) \($0.key.rawValue)" }.joined(separator: ", ") + " in 24 h"
        lines.append(StatusFormatter.row("restarts", restarts))
        lines.append(StatusFormatter.row("store", StatusFormatter.storeText(health.store)))
        let queue = health.queue
        let oldest = queue.oldestAgeSeconds.map { ", the oldest \(StatusFormatter.duration($0)) old" } ?? ""
        lines.append(StatusFormatter.row(
            "queue", "\(StatusFormatter.plural(queue.items, "item")), \(StatusFormatter.plural(queue.pings, "ping"))\(oldest); "
                + "\(StatusFormatter.plural(queue.deadLetters, "dead letter"))"))
        let fix = health.gps.lastFixAgeSeconds.map { ", last fix \(StatusFormatter.duration($0)) ago" } ?? ", no fix yet"
        lines.append(StatusFormatter.row("gps", health.gps.link.rawValue + fix))
        lines.append(StatusFormatter.row("clock", health.clockSource.rawValue))
        if let certificate = health.certificate {
            let expiry = certificate.notAfter.map { ", expires \(TextFormat.UTC($0).iso8601)" } ?? ""
            lines.append(StatusFormatter.row("unit", certificate.state.rawValue + expiry + (certificate.reason.map { ": \($0)" } ?? "")))
        }
        if let vehicle = health.vehicle {
            lines.append(StatusFormatter.row("vehicle", vehicle.link + (vehicle.batteryVolts.map { ", battery \(TextFormat.fixed($0, decimals: 1)) V" } ?? "")))
        }
        lines.append(StatusFormatter.row("clients", "\(health.frontEnds) on the local API, this call included"))
        if let version = health.remoteConfigVersion { lines.append(StatusFormatter.row("config", "remote v\(version)")) }
        let logged = health.logCounts.values.reduce(0, +)
        lines.append(StatusFormatter.row("journal", logged == 0 ? "no warnings since the last report"
            : "\(logged) warnings and errors since the last report (" + health.logCounts.sorted { $0.value > $1.value }.prefix(3)
                .map { "\($0.value)× \($0.key == "-" ? "without an id" : $0.key)" }.joined(separator: ", ") + ")"))
        if let rss = health.peakRSSKiB { lines.append(StatusFormatter.row("memory", "peak \(rss / 1024) MB")) }
        lines.append(StatusFormatter.row("report", "the next within \(StatusFormatter.duration(health.nextReportWithin))"))
        return lines.joined(separator: "\n")
    }
}

struct Describe: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the daemon's version and API version.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let description = try Session(options).callUnchecked(Methods.agentDescribe, NoParams())
        try Output(options).emit(description) {
            """
            driverd \(description.daemonVersion), API \(description.apiMajor).\(description.apiMinor) \
            (driverctl speaks \(APIVersion.major).\(APIVersion.minor))
            """
        }
    }
}

struct LogLevelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-level", abstract: "Change the daemon's log level until it restarts.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "trace, debug, info, notice, warning, error or critical.")
    var level: LogLevel

    func run() throws {
        let result = try Session(options).call(Methods.agentSetLogLevel, SetLogLevelParams(level: level))
        try Output(options).emit(result) { "log level: \(result.previous.rawValue) -> \(result.current.rawValue)" }
    }
}

extension LogLevel: ExpressibleByArgument {}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let agentCommands: [any ParsableCommand.Type] = [Status.self, Health.self, Describe.self, LogLevelCommand.self]
}
