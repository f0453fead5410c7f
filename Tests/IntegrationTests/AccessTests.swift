import Foundation
import Testing

/// Peer credentials decide who may call mutating methods: root, and members of the configured group.
@Suite("Access control by peer credentials", .ownThread)
struct AccessTests {
    static let group = "drvtest"

    @Test("an outsider may read but not mutate; a member of the configured group may mutate")
    func outsidersAndMembers() throws {
        try #require(getuid() == 0, "needs root to run clients as other users")
        let setpriv = "/usr/bin/setpriv"
        try #require(FileManager.default.isExecutableFile(atPath: setpriv), "setpriv (util-linux) is missing")
        try runProgram("/usr/sbin/groupadd", ["-f", Self.group])
        let gid = try #require(getgrnam(Self.group)?.pointee.gr_gid)

        let daemon = try DaemonProcess(config: "[rpc]\ngroup = \"\(Self.group)\"\n")
        // The daemon gives its socket to the group with mode 0660; let our test users reach the directory.
        chmod(daemon.directory.path, 0o755)
        var info = stat()
        stat(daemon.socketPath, &info)
        #expect(info.st_mode & 0o777 == 0o660)
        #expect(info.st_gid == gid)

        let ctl = Binaries.path("driverctl")
        let nobody = ["--reuid=65534", "--regid=65534"]
        // Not in the group: the socket itself refuses (mode 0660).
        let denied = try runProgram(setpriv, nobody + ["--clear-groups", ctl, "--socket", daemon.socketPath, "status"])
        #expect(denied.status == 1)
        #expect(denied.stderr.contains("permission denied"))

        // In the group: reads and mutations pass.
        let member = nobody + ["--groups=\(gid)"]
        let read = try runProgram(setpriv, member + [ctl, "--socket", daemon.socketPath, "status"])
        #expect(read.status == 0, "\(read.stderr)")
        let write = try runProgram(setpriv, member + [ctl, "--socket", daemon.socketPath, "log-level", "debug"])
        #expect(write.status == 0, "\(write.stderr)")
        #expect(write.stdout.contains("-> debug"))

        // Reachable socket, but outside the group: reads pass, mutations get the dedicated error.
        chmod(daemon.socketPath, 0o666)
        let outsiderRead = try runProgram(setpriv, nobody + ["--clear-groups", ctl, "--socket", daemon.socketPath, "status"])
        #expect(outsiderRead.status == 0, "\(outsiderRead.stderr)")
        let outsiderWrite = try runProgram(
            setpriv, nobody + ["--clear-groups", ctl, "--socket", daemon.socketPath, "--json", "log-level", "trace"])
        #expect(outsiderWrite.status == 1)
        #expect(outsiderWrite.stderr.contains("only root or members of the driver group"))
    }
}
