import ArgumentParser
import DriverAPI
import FoundationEssentials
import JSONRPC

struct Diag: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One screen for support: versions, GPS, queue, link, shift, disk and the last warnings.",
        discussion: """
            With --bundle FILE, also writes a .tar.gz for a support ticket: this report as text and JSON, the \
            configuration with secrets redacted, and the daemon's recent journal (as far as this user may read it).
            """)

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Write a support bundle (.tar.gz) to this file.", valueName: "file"))
    var bundle: String?

    func run() throws {
        let report = try Session(options).call(Methods.diagReport, NoParams())
        try Output(options).emit(report) { DiagFormatter.text(report) }
        if let bundle {
            let summary = try DiagBundle.write(report, to: bundle)
            Environment.printError("driverctl: wrote \(bundle): \(summary)")
        }
    }
}

/// The diag screen: short lines a support engineer can read out over the phone.
enum DiagFormatter {
    static func text(_ report: DiagReport) -> String {
        let status = report.status
        let versions = report.versions
        var lines = [
            "driverd \(versions.daemon) (API \(versions.api), driverctl \(APIVersion.major).\(APIVersion.minor)), "
                + "up \(StatusFormatter.duration(status.uptimeSeconds)), report at \(TextFormat.UTC(report.generatedAt).iso8601)",
            StatusFormatter.row("system", "\(versions.os ?? "unknown OS"), \(versions.kernel)"),
            StatusFormatter.row("libs", "SQLite \(versions.sqlite), libgps API \(versions.libgps)"),
            StatusFormatter.row("gps", GPSFormatter.summary(status.gps)),
            StatusFormatter.row("motion", GPSFormatter.sampling(status.sampling, motion: status.gps.motion)),
        ]
        if let quality = GPSFormatter.quality(status.gps) { lines.append(StatusFormatter.row("fixes", quality)) }
        if let error = status.gps.lastError { lines.append(StatusFormatter.row("gps error", error)) }
        if let clock = status.clock { lines.append(StatusFormatter.row("clock", ClockFormatter.text(clock))) }
        if let uplink = status.uplink { lines.append(OutboxFormatter.text(uplink)) }
        if let identity = status.identity { lines.append(StatusFormatter.row("unit", StatusFormatter.identityText(identity))) }
        if let store = status.store { lines.append(StatusFormatter.row("store", StatusFormatter.storeText(store))) }
        if let shift = status.shiftStatus { lines.append(StatusFormatter.row("shift", ShiftCommand.text(shift))) }
        if let vehicle = report.vehicle, vehicle.adapter != nil {
            lines.append(StatusFormatter.row(
                "vehicle", VehicleFormatter.line(vehicle) + ", odometer disagreements \(vehicle.odometerDisagreements) (trips over 5 % apart)"))
        }
        lines.append(StatusFormatter.row("disk", disk(report.storage)))
        if let setAside = report.storage.setAside, !setAside.isEmpty {
            lines.append(StatusFormatter.row(
                "set aside", "\(report.storage.setAsideRows ?? setAside.count) stored row(s) could not be read and were kept aside (table set_aside_row):"))
            for row in setAside { lines.append("  \(TextFormat.UTC(row.at).iso8601) \(row.table): \(row.reason)") }
        }
        let configWarnings = report.config.warnings
        lines.append(StatusFormatter.row(
            "config", report.config.path + (configWarnings.isEmpty ? ": no warnings" : ": " + configWarnings.joined(separator: "; "))))
        if report.warnings.isEmpty {
            lines.append(StatusFormatter.row("warnings", "none since start"))
        } else {
            let shown = report.warnings.suffix(5)
            lines.append(StatusFormatter.row(
                "warnings", "\(report.warningsTotal) since start, the last \(shown.count) (journalctl -x explains each id):"))
            for record in shown {
                let id = record.messageID.map { " [\($0)]" } ?? ""
                lines.append("  \(TextFormat.UTC(record.time).iso8601) \(record.level) \(record.subsystem): \(record.message)\(id)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func disk(_ storage: StorageStatus) -> String {
        var text = "\(storage.stateDirectory): database \(bytes(storage.databaseBytes))"
        if let free = storage.freeBytes, let total = storage.totalBytes, total > 0 {
            text += ", \(bytes(free)) free of \(bytes(total)) (\(free * 100 / total)%)"
            if free < 100 << 20 { text += " LOW" }
        } else {
            text += ", free space unknown"
        }
        return text
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : "\(TextFormat.fixed(value, decimals: 1)) \(units[unit])"
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let diagCommands: [any ParsableCommand.Type] = [Diag.self]
}
