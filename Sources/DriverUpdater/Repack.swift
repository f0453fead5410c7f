import DriverStore
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The installed version of a package, made into a .deb again from what dpkg recorded (its files as they are on
/// disk, the operator's conffiles included, its control fields and maintainer scripts), as dpkg-repack does:
/// the package to roll back to when the version installed before the first update came from nowhere kept.
enum Repack {
    static func build(_ package: String, into output: String, scratch: String) throws(UpdaterError) {
        _ = try Dpkg.run("/bin/rm", ["-rf", scratch])
        let control = scratch + "/DEBIAN"
        do {
            try DurableFile.makeDirectory(control)
        } catch {
            throw UpdaterError("cannot make \(control): \(error)")
        }
        // Files and links only; directories come with them (cp --parents).
        let listed = try Dpkg.run("/usr/bin/dpkg-query", ["-L", package]).output.split(separator: "\n").map(String.init)
        let files = listed.filter { path in
            var info = stat()
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR
        }
        guard !files.isEmpty else { throw UpdaterError("dpkg lists no file of \(package)") }
        _ = try Dpkg.run("/bin/cp", ["-a", "--parents", "--no-dereference"] + files + [scratch])
        // The status stanza without what only the installed state has.
        let stanza = try Dpkg.run("/usr/bin/dpkg-query", ["-s", package]).output
        var fields: [String] = []
        var skipping = false
        for line in stanza.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix(" ") {
                if !skipping { fields.append(String(line)) }
                continue
            }
            let name = line.prefix { $0 != ":" }
            skipping = ["Status", "Conffiles", "Config-Version"].contains(String(name))
            if !skipping { fields.append(String(line)) }
        }
        do {
            try DurableFile.write(Data((fields.joined(separator: "\n") + "\n").utf8), to: control + "/control")
        } catch {
            throw UpdaterError("cannot write the control file: \(error)")
        }
        for script in ["preinst", "postinst", "prerm", "postrm", "conffiles"] {
            let source = "/var/lib/dpkg/info/\(package).\(script)"
            guard access(source, F_OK) == 0 else { continue }
            _ = try Dpkg.run("/bin/cp", ["-a", source, control + "/" + script])
        }
        _ = try Dpkg.run("/bin/chmod", ["0755", scratch, control])
        _ = try Dpkg.run("/usr/bin/dpkg-deb", ["--root-owner-group", "-b", scratch, output])
        _ = try Dpkg.run("/bin/rm", ["-rf", scratch])
    }
}
