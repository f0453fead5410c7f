import Crypto
import DriverAPI
import DriverStore
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The installed version of a package, made into a .deb again from what dpkg recorded (its files as they are on
/// disk, its control fields and maintainer scripts), as dpkg-repack does: the package to roll back to when the
/// version installed before the first update came from nowhere kept.
///
/// Conffiles are the catch. A package carrying the operator's edited file as its own would make dpkg take the
/// edit for the package's default, and the next upgrade would replace it with the new default: the unit would
/// lose its backend and credentials. So each conffile goes in as the package shipped it (the content whose MD5
/// dpkg recorded): the file on disk when unedited, else the same file in the release being installed (a
/// conffile seldom changes between versions). Only when neither matches does the edited file go in.
enum Repack {
    static func build(_ package: String, into output: String, scratch: String, release: String) throws(UpdaterError) {
        _ = try Dpkg.run("/bin/rm", ["-rf", scratch])
        let control = scratch + "/DEBIAN"
        do {
            try DurableFile.makeDirectory(control)
        } catch {
            throw UpdaterError("cannot make \(control): \(error)")
        }
        // Files and links to files only; directories come with them (cp --parents). `stat` follows links: /lib, a
        // link to usr/lib on a merged-/usr system, is a directory here, as it was in the package.
        let listed = try Dpkg.run("/usr/bin/dpkg-query", ["-L", package]).output.split(separator: "\n").map(String.init)
        let files = listed.filter { path in
            var info = stat()
            return stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR
        }
        guard !files.isEmpty else { throw UpdaterError("dpkg lists no file of \(package)") }
        _ = try Dpkg.run("/bin/cp", ["-a", "--parents", "--no-dereference"] + files + [scratch])
        try restoreShippedConffiles(package, scratch: scratch, release: release)
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
        // xz at level 0: 2 s for driverd's 35 MB where dpkg-deb's default (xz -6) took 20 s, for 12 MB kept on flash
        // instead of 10; the unit does this in its maintenance window, often on its battery.
        _ = try Dpkg.run("/usr/bin/dpkg-deb", ["--root-owner-group", "-Zxz", "-z0", "-b", scratch, output])
        _ = try Dpkg.run("/bin/rm", ["-rf", scratch])
    }

    /// Puts each edited conffile's shipped content into the tree at `scratch` (see above).
    private static func restoreShippedConffiles(_ package: String, scratch: String, release: String) throws(UpdaterError) {
        let recorded = try Dpkg.run("/usr/bin/dpkg-query", ["-W", "-f=${Conffiles}", package]).output
        var extracted: String?
        for line in recorded.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, !fields.contains("obsolete") else { continue }
            let path = String(fields[0]), shipped = String(fields[1])
            if try md5(of: path) == shipped { continue }
            if extracted == nil {
                extracted = scratch + ".release"
                _ = try Dpkg.run("/bin/rm", ["-rf", extracted!])
                _ = try Dpkg.run("/usr/bin/dpkg-deb", ["-x", release, extracted!])
            }
            if let extracted, try md5(of: extracted + path) == shipped {
                _ = try Dpkg.run("/bin/cp", ["-a", extracted + path, scratch + path])
            }
        }
        if let extracted { _ = try Dpkg.run("/bin/rm", ["-rf", extracted]) }
    }

    /// MD5 in hex, as dpkg records a conffile's; nil when there is no file (an admin removed it). Throws when it
    /// cannot be read: a conffile of unknown content is never taken for an edited one.
    static func md5(of path: String) throws(UpdaterError) -> String? {
        do {
            return try DurableFile.contents(path).map { TextFormat.hex(Insecure.MD5.hash(data: $0)) }
        } catch {
            throw UpdaterError("cannot read the conffile \(path): \(error)")
        }
    }
}
