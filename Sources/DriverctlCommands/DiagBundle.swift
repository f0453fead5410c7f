import DriverAPI
import Foundation
import JSONRPC

/// Writes the support bundle: a .tar.gz of one directory, made with the system's tar (Debian's is essential).
enum DiagBundle {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Returns a one-line summary of what went in.
    static func write(_ report: DiagReport, to path: String) throws -> String {
        let stamp = TextFormat.UTC(report.generatedAt).iso8601.filter { $0.isNumber || $0 == "T" }
        let name = "driverd-diag-\(stamp)"
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("driverctl-\(getpid())-\(name)")
        let root = scratch.appendingPathComponent(name)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

        let journal = readJournal()
        let files: [(String, String)] = [
            ("report.txt", DiagFormatter.text(report) + "\n"),
            ("report.json", String(decoding: try Codec.encode(report), as: UTF8.self) + "\n"),
            ("driverd.toml", report.config.fileText
                ?? "# \(report.config.path) could not be read by the daemon (absent: the built-in defaults apply).\n"),
            ("effective-config.toml", effectiveConfig(report.config)),
            ("journal.txt", journal.text),
        ]
        for (file, text) in files {
            try Data(text.utf8).write(to: root.appendingPathComponent(file))
        }
        let target = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).path
        let tar = try run("/bin/tar", ["-czf", target, "-C", scratch.path, name])
        guard tar.status == 0 else { throw Failure(description: "tar failed (\(tar.status)): \(tar.output)") }
        return "report, configuration (secrets redacted), \(journal.summary)"
    }

    /// The effective configuration as TOML, one section per prefix, for comparing with the file.
    static func effectiveConfig(_ config: DiagConfig) -> String {
        var text = "# The configuration driverd runs with (file, flags and defaults merged); secrets redacted.\n"
        var section = ""
        for key in config.effective.keys.sorted() {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if parts[0] != section {
                section = parts[0]
                text += "\n[\(section)]\n"
            }
            text += "\(parts[1]) = \(config.effective[key]!)\n"
        }
        return text
    }

    /// The daemon's journal of the last day, with catalog explanations (-x). Reading the system journal needs
    /// root or the systemd-journal or adm group; without them the file says so.
    static func readJournal() -> (text: String, summary: String) {
        let arguments = [
            "--no-pager", "-x", "-o", "short-iso-precise", "--since=-24h", "-n", "5000",
            "_SYSTEMD_UNIT=driverd.service", "+", "UNIT=driverd.service", "+", "UNIT=driverd.socket", "+", "SYSLOG_IDENTIFIER=driverd",
        ]
        do {
            let outcome = try run("/usr/bin/journalctl", arguments)
            let lines = outcome.output.split(separator: "\n").count
            if outcome.status != 0 {
                return ("# journalctl exited with \(outcome.status):\n" + outcome.output, "no journal (journalctl exited \(outcome.status))")
            }
            return (outcome.output, "journal (\(lines) lines)")
        } catch {
            return ("# journalctl could not be run: \(error)\n", "no journal (\(error))")
        }
    }

    /// Runs a program to its end; stdout and stderr together.
    static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
