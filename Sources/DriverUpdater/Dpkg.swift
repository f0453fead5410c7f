import DriverDomain
import Spawn

/// dpkg as driverd-update uses it: what is installed, install a file, finish an interrupted run. Every failure is
/// an `UpdaterError` with dpkg's own words.
enum Dpkg {
    /// The package's version and architecture when dpkg counts it installed (`DpkgStatus`); nil otherwise.
    static func installed(_ package: String) throws(UpdaterError) -> (version: String, architecture: String)? {
        let result = try run("/usr/bin/dpkg-query", ["-W", "-f=${Status}|${Version}|${Architecture}", package], allowFailure: true)
        let fields = result.output.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard result.status == 0, fields.count == 3, DpkgStatus.isInstalled(fields[0]) else { return nil }
        return (fields[1], fields[2])
    }

    static func architecture() throws(UpdaterError) -> String {
        try run("/usr/bin/dpkg", ["--print-architecture"]).output.trimmingWhitespace()
    }

    /// Installs `path`, keeping the operator's edited conffiles; a downgrade when rolling back.
    static func install(_ path: String, downgrade: Bool = false) throws(UpdaterError) {
        var arguments = ["--force-confold"]
        if downgrade { arguments.append("--force-downgrade") }
        _ = try run("/usr/bin/dpkg", arguments + ["-i", path])
    }

    /// Finishes what an interrupted dpkg left (unpacked, half-configured packages).
    static func recover() throws(UpdaterError) {
        _ = try run("/usr/bin/dpkg", ["--configure", "-a", "--force-confold"])
    }

    @discardableResult
    static func run(_ program: String, _ arguments: [String], allowFailure: Bool = false) throws(UpdaterError) -> (status: Int32, output: String) {
        let result: (status: Int32, output: String)
        do {
            result = try ChildProcess.run(program, arguments)
        } catch {
            throw UpdaterError("\(program): \(error)")
        }
        if result.status != 0, !allowFailure {
            throw UpdaterError("\(([program] + arguments).joined(separator: " ")) exited with \(result.status): \(result.output.suffix(600))")
        }
        return result
    }
}

struct UpdaterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
