import BackendContract
import Crypto
import DriverAPI
import DriverDaemon
import DriverDomain
import DriverStore
import FoundationEssentials
import ReaderThread
#if canImport(Glibc)
import Glibc
#endif

/// driverd-update: root, started by driverd-update.path when driverd asks (its `request.json`) or when a journal
/// says an install was interrupted. It trusts nothing driverd wrote: the release's signature is checked again
/// with the key in /etc, the package is copied into its own directory and checked against the signed SHA-256
/// there. It keeps the running version's package, installs the new one with dpkg, and judges the new driverd
/// (`HealthGate`); a bad one is replaced by the kept package. Its verdict goes into driverd's `outcome.json`,
/// which whichever driverd runs next reports to the backend.
struct Updater {
    struct Settings {
        var publicKey: String
        var healthySeconds: Double
        var socketPath: String
        /// driverd's update directory (`<state>/update`).
        var requestDirectory: String
        /// driverd-update's own (`/var/lib/driverd-update`).
        var stateDirectory: String
    }

    /// What survives a power cut in the middle: which package is being installed over which.
    struct Journal: Codable, Equatable {
        enum Phase: String, Codable { case installing, judging }
        var phase: Phase
        var package: String
        var version: String
        var sha256: String
        var previousVersion: String
        var kept: String
        var new: String
        var backendRequired: Bool
    }

    let settings: Settings
    let say: (String) -> Void

    var journalPath: String { settings.stateDirectory + "/journal.json" }
    var requestPath: String { settings.requestDirectory + "/request.json" }
    var outcomePath: String { settings.requestDirectory + "/outcome.json" }
    var packagesDirectory: String { settings.stateDirectory + "/packages" }

    /// One run: an interrupted install first, else driverd's request, else nothing.
    func run() throws(UpdaterError) {
        if let journal = try readJournal() {
            say("resuming the install of \(journal.package) \(journal.version) (\(journal.phase.rawValue))")
            try resume(journal)
            return
        }
        guard access(requestPath, F_OK) == 0 else {
            say("nothing to do")
            return
        }
        try takeRequest()
    }

    // MARK: The request

    private func takeRequest() throws(UpdaterError) {
        let signed: SignedRelease
        let manifest: ReleaseManifest
        do {
            let bytes = try Self.readNoFollow(requestPath, limit: 1 << 20)
            signed = try Codec.decode(SignedRelease.self, from: bytes)
            guard let payload = Data(base64Encoded: signed.payload) else { throw UpdaterError("the request's payload is not base64") }
            guard !settings.publicKey.isEmpty else { throw UpdaterError("no update.public_key in the configuration: no release is installed") }
            guard let signature = signed.signature, FleetSignature.isValid(signature, of: payload, publicKey: settings.publicKey) else {
                throw UpdaterError("bad signature: not made by the release key in the configuration (update.public_key)")
            }
            manifest = try Codec.decode(ReleaseManifest.self, from: payload)
        } catch {
            // Nothing trustworthy to answer about: no outcome names a release driverd did not prove.
            say("request refused: \(error)")
            remove(requestPath)
            return
        }
        do {
            let job = try prepare(manifest)
            remove(requestPath)
            try install(job)
        } catch {
            say("release \(manifest.package) \(manifest.version) refused: \(error)")
            var running = ""
            do {
                running = try Dpkg.installed(manifest.package)?.version ?? ""
            } catch {
                say("the running version of \(manifest.package) is not known (the answer names none): \(error)")
            }
            writeOutcome(manifest.package, manifest.version, .refused, reason: error.description, running: running, sha256: manifest.sha256)
            remove(requestPath)
        }
    }

    /// Checks the release against this system and makes the two packages ready: the new one copied and verified,
    /// the running one kept.
    private func prepare(_ manifest: ReleaseManifest) throws(UpdaterError) -> Journal {
        // The rules driverd applied, again: driverd's word is not trusted here.
        let installed = try Dpkg.installed(manifest.package)
        if let reason = ReleaseRules.refusal(of: manifest, installed: installed) { throw UpdaterError(reason) }
        guard let installed else { throw UpdaterError("package \(manifest.package) is not installed") }
        do {
            try DurableFile.makeDirectory(packagesDirectory)
        } catch {
            throw UpdaterError("cannot make \(packagesDirectory): \(error)")
        }
        let new = "\(packagesDirectory)/\(manifest.package)_\(manifest.version)_\(manifest.architecture).deb"
        let copied = try Self.copyNoFollow(settings.requestDirectory + "/package.deb", to: new)
        guard copied.size == manifest.size, copied.sha256 == manifest.sha256 else {
            remove(new)
            throw UpdaterError("the package does not match the signed SHA-256 and size")
        }
        let kept = "\(packagesDirectory)/\(manifest.package)_\(installed.version)_\(installed.architecture).deb"
        if access(kept, F_OK) != 0 {
            say("keeping \(manifest.package) \(installed.version) for a rollback (rebuilt from dpkg's records)")
            try Repack.build(manifest.package, into: kept + ".partial", scratch: settings.stateDirectory + "/repack", release: new)
            do {
                try DurableFile.rename(kept + ".partial", to: kept)
            } catch {
                throw UpdaterError("cannot keep \(kept): \(error)")
            }
        }
        // The backend must be reachable after the install only when it was before.
        let backendRequired = probe(of: manifest.package).backendOnline() == true
        return Journal(
            phase: .installing, package: manifest.package, version: manifest.version, sha256: manifest.sha256, previousVersion: installed.version,
            kept: kept, new: new, backendRequired: backendRequired)
    }

    private func install(_ journal: Journal) throws(UpdaterError) {
        try writeJournal(journal)
        say("installing \(journal.package) \(journal.version) over \(journal.previousVersion)")
        // The gate's time runs from here: dpkg's postinst waits for the new daemon's start.
        let started = monotonicSeconds()
        do {
            try Dpkg.install(journal.new)
        } catch {
            return rollBack(journal, reason: "dpkg failed: \(error)")
        }
        var judging = journal
        judging.phase = .judging
        try writeJournal(judging)
        judge(judging, installStarted: started)
    }


    // MARK: After a power cut

    private func resume(_ journal: Journal) throws(UpdaterError) {
        // dpkg's own recovery first: an unpacked or half-configured package is configured.
        do {
            try Dpkg.recover()
        } catch {
            say("dpkg --configure -a: \(error)")
        }
        if journal.phase == .installing, try Dpkg.installed(journal.package)?.version != journal.version {
            say("the install was cut: installing \(journal.version) again")
            return try install(journal)
        }
        // Installed (or cut while judging): judge from the start (a new driverd process in any case).
        let installed = try Dpkg.installed(journal.package)
        guard installed?.version == journal.version else {
            return rollBack(journal, reason: "after a power cut \(journal.version) was not installed")
        }
        judge(journal, installStarted: monotonicSeconds())
    }

    // MARK: The health gate

    /// How a package's program is looked at: driverd by its unit, its socket and its backend link; another of the
    /// fleet's packages (driverd-kiosk) by its unit of the same name alone.
    private func probe(of package: String) -> DaemonProbe {
        package == "driverd"
            ? DaemonProbe(unit: "driverd.service", socketPath: settings.socketPath)
            : DaemonProbe(unit: "\(package).service", socketPath: nil)
    }

    /// Failed looks at the unit in a row (one a second) before the gate is told it does not run.
    static let failedLooksAllowed = 30

    private func judge(_ journal: Journal, installStarted: Double) {
        let probe = probe(of: journal.package)
        // systemd may still be restarting the unit after dpkg's postinst; begin from what it counts now.
        var restartsBefore = 0
        do {
            restartsBefore = try probe.unitState().restarts
        } catch {
            say("systemd's restart count not read (\(error)): counting from 0")
        }
        var gate = HealthGate(
            settings: .init(healthySeconds: settings.healthySeconds, backendRequired: journal.backendRequired),
            installedAt: installStarted)
        say("judging \(journal.package) \(journal.version): READY\(probe.socketPath != nil ? ", its socket" : "")\(journal.backendRequired ? ", the backend" : ""), no restart for \(Int(settings.healthySeconds)) s")
        var failedLooks = 0
        while true {
            let look: HealthGate.Probe
            do {
                look = try probe.probe(restartsBefore: restartsBefore)
                failedLooks = 0
            } catch {
                // A look that failed says nothing of the daemon: taken again, not judged as stopped, for up to 30 s;
                // a systemd that cannot be asked for longer is judged as a daemon not running.
                failedLooks += 1
                say("the unit could not be looked at (\(error))\(failedLooks < Self.failedLooksAllowed ? ": again in a second" : "")")
                guard failedLooks >= Self.failedLooksAllowed else {
                    usleep(1_000_000)
                    continue
                }
                look = HealthGate.Probe(running: false, crashed: false, mainPID: 0, answers: false, backendOnline: false)
            }
            switch gate.observe(look, at: monotonicSeconds()) {
            case .wait:
                usleep(1_000_000)
            case .commit:
                return commit(journal)
            case .rollBack(let reason):
                return rollBack(journal, reason: reason.rawValue)
            }
        }
    }

    private func commit(_ journal: Journal) {
        say("\(journal.package) \(journal.version) is healthy: committed")
        writeOutcome(journal.package, journal.version, .applied, reason: nil, running: journal.version, sha256: journal.sha256)
        // The new package is the one to roll back to next time; older ones go.
        do {
            for name in try Self.list(packagesDirectory) where name.hasPrefix(journal.package + "_") && packagesDirectory + "/" + name != journal.new {
                remove(packagesDirectory + "/" + name)
            }
        } catch {
            say("older packages kept (\(packagesDirectory) cannot be listed): \(error)")
        }
        remove(journalPath)
    }

    private func rollBack(_ journal: Journal, reason: String) {
        say("\(journal.package) \(journal.version) failed (\(reason)): installing \(journal.previousVersion) again")
        // The verdict first: the driverd the rollback starts reports it and does not take the release again.
        writeOutcome(journal.package, journal.version, .rolledBack, reason: reason, running: journal.previousVersion, sha256: journal.sha256)
        do {
            try Dpkg.install(journal.kept, downgrade: true)
        } catch {
            say("the rollback failed: \(error)")
        }
        remove(journal.new)
        remove(journalPath)
    }

    // MARK: Files

    /// driverd's `outcome.json`, owned by driverd (the owner of its directory) so that it can read and remove it.
    /// It names the package it judged by its SHA-256: driverd credits the verdict to that release alone.
    private func writeOutcome(_ package: String, _ version: String, _ status: UpdateAckStatus, reason: String?, running: String, sha256: String) {
        let ack = UpdateAck(package: package, version: version, status: status, reason: reason, runningVersion: running, at: Self.wallClock(), sha256: sha256)
        do {
            try DurableFile.write(Data(try Codec.encode(ack)), to: outcomePath)
            var directory = stat()
            if stat(settings.requestDirectory, &directory) == 0 { _ = chown(outcomePath, directory.st_uid, directory.st_gid) }
        } catch {
            say("cannot write \(outcomePath): \(error)")
        }
    }

    /// The interrupted install, or nil. Throws when there is a journal that cannot be read: nothing new is
    /// installed over an install whose outcome is not known.
    private func readJournal() throws(UpdaterError) -> Journal? {
        do {
            return try DurableFile.contents(journalPath).map { try Codec.decode(Journal.self, from: $0) }
        } catch {
            throw UpdaterError("\(journalPath) cannot be read, so an interrupted install cannot be judged (nothing else is installed until it is removed): \(error)")
        }
    }

    /// Removes `path`; a failure is said (the stale file stays, and the next run meets it).
    private func remove(_ path: String) {
        do {
            try DurableFile.remove(path)
        } catch {
            say("cannot remove \(path): \(error)")
        }
    }

    private func writeJournal(_ journal: Journal) throws(UpdaterError) {
        do {
            try DurableFile.write(Data(try Codec.encode(journal)), to: journalPath)
        } catch {
            throw UpdaterError("cannot write \(journalPath): \(error)")
        }
    }

    /// A file driverd wrote, read without following a link it may have put there.
    static func readNoFollow(_ path: String, limit: Int) throws(UpdaterError) -> Data {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw UpdaterError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = read(fd, &bytes, limit)
        guard count >= 0 else { throw UpdaterError("read \(path): \(String(cString: strerror(errno)))") }
        return Data(bytes.prefix(count))
    }

    /// Copies driverd's package into driverd-update's directory (no link followed), hashing what it copies: what
    /// is installed is what was checked.
    static func copyNoFollow(_ source: String, to target: String) throws(UpdaterError) -> (size: Int, sha256: String) {
        let input = open(source, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw UpdaterError("open \(source): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let output = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw UpdaterError("open \(target): \(String(cString: strerror(errno)))") }
        defer { close(output) }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var size = 0
        while true {
            let count = read(input, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw UpdaterError("read \(source): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            hasher.update(data: buffer[0..<count])
            guard write(output, buffer, count) == count else { throw UpdaterError("write \(target): \(String(cString: strerror(errno)))") }
            size += count
        }
        guard fsync(output) == 0 else { throw UpdaterError("fsync \(target): \(String(cString: strerror(errno)))") }
        return (size, FleetSignature.hex(hasher.finalize()))
    }

    static func list(_ directory: String) throws -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    static func wallClock() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
