import ArgumentParser
import DriverAPI

struct UpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Show the installed version, a release on its way in (its download, the maintenance window) and the last outcome.")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Ask the backend for a staged release now (as its push would), then show.")
    var check = false

    func run() throws {
        let status = try Session(options).call(check ? Methods.updateCheck : Methods.updateStatus, NoParams())
        try Output(options).emit(status) { UpdateFormatter.details(status) }
    }
}

/// The self-update's status in words.
enum UpdateFormatter {
    static func details(_ status: UpdateStatus) -> String {
        var lines = ["installed:  \(status.package) \(status.installedVersion)"]
        lines.append("mode:       \(status.mode == .auto ? "auto (driverd-update installs releases)" : "external (the image is updated by another tool)")")
        if let release = status.release {
            let percent = release.size > 0 ? release.downloadedBytes * 100 / release.size : 0
            lines.append("release:    \(release.package) \(release.version), \(release.state.rawValue)")
            lines.append("download:   \(release.downloadedBytes) of \(release.size) bytes (\(percent) %)")
            if let waiting = release.waitingFor { lines.append("waiting:    \(waiting)") }
        } else {
            lines.append("release:    none waiting")
        }
        lines.append("window:     \(status.window)")
        lines.append("today:      \(status.bytesToday) of \(status.maxBytesPerDay) bytes (update.max_bytes_per_day)")
        if let outcome = status.lastOutcome {
            lines.append("last:       \(outcome.package) \(outcome.version) \(outcome.status.rawValue)\(outcome.reason.map { ": \($0)" } ?? "") at \(GPSFormatter.utc(outcome.at))")
        }
        return lines.joined(separator: "\n")
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let updateCommands: [any ParsableCommand.Type] = [UpdateCommand.self]
}
