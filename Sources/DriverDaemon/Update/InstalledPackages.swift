import DriverDomain
import DriverStore
import FoundationEssentials
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

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
            guard let name = fields["Package"], fields["Status"].map({ DpkgStatus.isInstalled(String($0)) }) == true, let version = fields["Version"] else { continue }
            packages[String(name)] = Package(version: String(version), architecture: String(fields["Architecture"] ?? "all"))
        }
        self.packages = packages
    }

    static let statusPath = "/var/lib/dpkg/status"

    /// The status file at `path`; none installed when there is none (not a Debian system). Throws when it cannot be read.
    static func read(_ path: String = statusPath) throws -> InstalledPackages {
        InstalledPackages(statusFile: try DurableFile.contents(path).map { String(decoding: $0, as: UTF8.self) } ?? "")
    }
}

/// dpkg's status file, parsed again only when dpkg changed it (it writes a new file and renames it over the old):
/// the file is hundreds of kilobytes on a full system, and the desk asks at every check, `driverctl update` and
/// each round of the maintenance window.
final class InstalledPackagesFile: Sendable {
    /// What identifies one version of the file: its inode, size and modification time.
    private struct Stamp: Equatable {
        var inode: UInt64
        var size: Int64
        var modified: Int64

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        }
    }

    let path: String
    private let logger: Logger
    private let cached = Mutex<(stamp: Stamp, packages: InstalledPackages)?>(nil)

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// A file that cannot be read counts as none installed (logged, and read again next time).
    var current: InstalledPackages {
        let stamp = Stamp(path)
        if let stamp, let cached = cached.withLock({ $0 }), cached.stamp == stamp { return cached.packages }
        guard let packages = logger.valueOrLog("reading dpkg's status \(path)", { try InstalledPackages.read(path) }) else {
            return InstalledPackages(statusFile: "")
        }
        if let stamp { cached.withLock { $0 = (stamp, packages) } }
        return packages
    }
}
