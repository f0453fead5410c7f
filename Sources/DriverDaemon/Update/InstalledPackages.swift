import DriverStore
import FoundationEssentials

/// What dpkg has installed, read from its status file (`/var/lib/dpkg/status`): the daemon may read it, never
/// write it.
struct InstalledPackages: Sendable {
    struct Package: Sendable, Equatable {
        var version: String
        var architecture: String
    }

    let packages: [String: Package]

    /// Packages dpkg has installed or is installing (`install ok installed`, or `half-configured`, `unpacked` while
    /// dpkg runs: driverd starts from a postinst), with the version dpkg records.
    init(statusFile text: String) {
        var packages: [String: Package] = [:]
        for stanza in text.split(separator: "\n\n", omittingEmptySubsequences: true) {
            var fields: [Substring: Substring] = [:]
            for line in stanza.split(separator: "\n") where !line.hasPrefix(" ") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon]] = line[line.index(after: colon)...].drop { $0 == " " }
            }
            guard let name = fields["Package"], fields["Status"]?.hasPrefix("install ok ") == true, let version = fields["Version"] else { continue }
            packages[String(name)] = Package(version: String(version), architecture: String(fields["Architecture"] ?? "all"))
        }
        self.packages = packages
    }

    static let statusPath = "/var/lib/dpkg/status"

    /// The status file at `path`; none installed when it cannot be read.
    static func read(_ path: String = statusPath) -> InstalledPackages {
        InstalledPackages(statusFile: ((try? DurableFile.contents(path)) ?? nil).map { String(decoding: $0, as: UTF8.self) } ?? "")
    }
}
