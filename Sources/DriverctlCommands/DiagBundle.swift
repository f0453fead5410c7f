import DriverAPI
import FoundationEssentials
import Spawn
#if canImport(Glibc)
import Glibc
#endif
import JSONRPC

/// The support bundle: a .tar.gz of one directory, made with the system's tar (Debian's is essential). One maker
/// for both: `driverctl diag --bundle` writes it to a file; driverd, asked by the fleet, uploads it (the multi-call
/// binary hands this maker to the daemon).
public enum DiagBundle {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Writes it to `path`; returns a one-line summary of what went in.
    static func write(_ report: DiagReport, to path: String) throws -> String {
        let (data, summary) = try make(report)
        let target = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        try data.write(to: target)
        return summary
    }

    /// The bundle's bytes, with the journal of the last `windowSeconds` (at most `maxJournalLines` lines).
    public static func make(_ report: DiagReport, windowSeconds: Double = 86400, maxJournalLines: Int = 5000) throws -> (data: Data, summary: String) {
        let stamp = TextFormat.UTC(report.generatedAt).iso8601.filter { $0.isNumber || $0 == "T" }
        let name = "driverd-diag-\(stamp)"
        // Unique per call: driverd makes bundles for fleet requests in one process, two may come in the same second,
        // and one's cleanup must not take the other's files.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("driverctl-\(getpid())-\(UUID().uuidString)")
        let root = scratch.appendingPathComponent(name)
        defer { try? FileManager.default.removeItem(at: scratch) }  // a scratch copy in /tmp: left for tmpfiles if it stays
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

        let journal = readJournal(windowSeconds: windowSeconds, maxLines: maxJournalLines)
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
        let archive = scratch.appendingPathComponent(name + ".tar.gz").path
        let tar = try ChildProcess.run("/bin/tar", ["-czf", archive, "-C", scratch.path, name])
        guard tar.status == 0 else { throw Failure(description: "tar failed (\(tar.status)): \(tar.output)") }
        return (try Data(contentsOf: URL(fileURLWithPath: archive)), "report, configuration (secrets redacted), \(journal.summary)")
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

    /// The daemon's journal of the last `windowSeconds`, with catalog explanations (-x). Reading the system
    /// journal needs root or the systemd-journal or adm group; without them the file says so.
    static func readJournal(windowSeconds: Double, maxLines: Int) -> (text: String, summary: String) {
        let arguments = [
            "--no-pager", "-x", "-o", "short-iso-precise", "--since=-\(max(1, Int(windowSeconds)))s", "-n", "\(max(1, maxLines))",
            "_SYSTEMD_UNIT=driverd.service", "+", "UNIT=driverd.service", "+", "UNIT=driverd.socket", "+", "SYSLOG_IDENTIFIER=driverd",
        ]
        do {
            let outcome = try ChildProcess.run("/usr/bin/journalctl", arguments)
            let lines = outcome.output.split(separator: "\n").count
            if outcome.status != 0 {
                return ("# journalctl exited with \(outcome.status):\n" + outcome.output, "no journal (journalctl exited \(outcome.status))")
            }
            return (outcome.output, "journal (\(lines) lines)")
        } catch {
            return ("# journalctl could not be run: \(error)\n", "no journal (\(error))")
        }
    }
}
