import Foundation
import DriverDomain
import Testing

/// driverctl against a real daemon, and without one.
@Suite("driverctl", .ownThread)
struct DriverctlTests {
    let ctl = Binaries.path("driverctl")

    @Test("without a daemon it says so in one line and exits non-zero")
    func daemonNotRunning() throws {
        let directory = TemporaryDirectory()
        let outcome = try runProgram(ctl, ["--socket", directory.file("absent.sock"), "status"])
        #expect(outcome.status == 1)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr == "driverctl: driverd is not running (no socket at \(directory.file("absent.sock")))\n")
    }

    @Test("driverd called as driverctl (the package's link) is driverctl: the same answers, the same errors, no daemon started")
    func multiCall() throws {
        let directory = TemporaryDirectory()
        let link = directory.file("driverctl")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Binaries.path("driverd"))
        let daemon = try DaemonProcess()
        for arguments in [["describe"], ["--json", "shift", "status"], ["--help"]] {
            let viaLink = try runProgram(link, ["--socket", daemon.socketPath] + arguments)
            let direct = try runProgram(ctl, ["--socket", daemon.socketPath] + arguments)
            #expect(viaLink.status == direct.status && viaLink.stdout == direct.stdout, "\(arguments): \(viaLink.stdout)\(viaLink.stderr)")
        }
        let absent = try runProgram(link, ["--socket", directory.file("absent.sock"), "status"])
        #expect(absent.status == 1 && absent.stderr == "driverctl: driverd is not running (no socket at \(directory.file("absent.sock")))\n")
        try daemon.stop()
    }

    @Test("a socket file nobody listens on reads as 'not running' too")
    func staleSocket() throws {
        let daemon = try DaemonProcess()
        try daemon.stop(signal: SIGKILL)
        let outcome = try runProgram(ctl, ["--socket", daemon.socketPath, "status"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.hasPrefix("driverctl: driverd is not running"))
        #expect(outcome.stderr.split(separator: "\n").count == 1)
    }

    @Test("status for people names every section: the backend not configured, the shift and the safety gate")
    func humanStatus() throws {
        let daemon = try DaemonProcess()
        let outcome = try runProgram(ctl, ["status"], environment: ["DRIVERD_SOCKET": daemon.socketPath])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        for section in ["rpc", "gps", "sampling", "backend", "shift", "safety"] {
            #expect(outcome.stdout.contains("\n\(section) "), "missing \(section) in:\n\(outcome.stdout)")
        }
        #expect(outcome.stdout.contains("backend   not configured"))
        #expect(outcome.stdout.contains("shift     on shift since "), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("safety    speed unknown: pull over to complete"), "\(outcome.stdout)")
        #expect(outcome.stdout.hasPrefix("driverd 0."))
    }

    @Test("--json gives the daemon's answer for scripts")
    func jsonStatus() throws {
        let daemon = try DaemonProcess()
        let outcome = try runProgram(ctl, ["--socket", daemon.socketPath, "--json", "status"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        #expect(object["apiMajor"] as? Int == 1)
        #expect((object["gps"] as? [String: Any])?["available"] as? Bool == true)
        #expect((object["uplink"] as? [String: Any])?["link"] as? String == "disabled")
        #expect((object["shiftStatus"] as? [String: Any])?["onShift"] as? Bool == true)
        #expect((object["safety"] as? [String: Any])?["state"] as? String == "unknown")
        #expect((object["rpc"] as? [String: Any])?["socketPath"] as? String == daemon.socketPath)

        let describe = try runProgram(ctl, ["describe", "--json", "--socket", daemon.socketPath])
        let description = try #require(try JSONSerialization.jsonObject(with: Data(describe.stdout.utf8)) as? [String: Any])
        #expect(Set(description.keys) == ["apiMajor", "apiMinor", "daemonVersion"])
    }

    @Test("log-level changes the daemon's level at run time")
    func logLevel() throws {
        let daemon = try DaemonProcess()
        let outcome = try runProgram(ctl, ["--socket", daemon.socketPath, "log-level", "debug"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout == "log level: info -> debug\n")
        let bad = try runProgram(ctl, ["--socket", daemon.socketPath, "log-level", "loud"])
        #expect(bad.status != 0)
    }
}

/// driverd's own command line: version, config checking, flags over the file.
@Suite("driverd command line", .ownThread)
struct DriverdCommandLineTests {
    let driverd = Binaries.path("driverd")

    @Test("--version prints the version")
    func version() throws {
        let outcome = try runProgram(driverd, ["--version"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.hasPrefix("0."))
    }

    @Test("--check-config names the key, the bad value and what is allowed; unknown keys are warnings")
    func checkConfig() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("driverd.toml")
        try "[rpc]\nmax_line_bytes = 12\n[daemon]\nlog_level = \"loud\"\ncolour = true\n".write(toFile: path, atomically: true, encoding: .utf8)
        let bad = try runProgram(driverd, ["--config", path, "--check-config"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("rpc.max_line_bytes: 12 is invalid: expected an integer from 1024 to 16777216"))
        #expect(bad.stderr.contains("daemon.log_level: \"loud\" is invalid: expected one of trace"))
        #expect(bad.stderr.contains("\(path): warning: daemon.colour: unknown key"))
        #expect(bad.stderr.contains("\(path): 2 errors, 1 warning"))

        try "[rpc]\nsocket = \"/run/x.sock\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        let good = try runProgram(driverd, ["--config", path, "--check-config"])
        #expect(good.status == 0)
        #expect(good.stdout == "\(path): OK (\(DaemonConfig.knownKeys.count) keys known)\n")

        // A password in a file everybody can read is worth a warning, not a refusal.
        try "[backend]\nurl = \"https://fleet.example.com\"\nusername = \"unit-7\"\npassword = \"s3cret\"\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        let exposed = try runProgram(driverd, ["--config", path, "--check-config"])
        #expect(exposed.status == 0)
        #expect(exposed.stderr.contains("backend.password: set in a file every user can read (mode 0644)"))
        #expect(exposed.stdout.contains("OK with 1 warning"))
        #expect(!exposed.stderr.contains("s3cret") && !exposed.stdout.contains("s3cret"))

        try "[rpc\nsocket = ".write(toFile: path, atomically: true, encoding: .utf8)
        let broken = try runProgram(driverd, ["--config", path, "--check-config"])
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("\(path):1:"))
    }

    @Test("an absent config file means the defaults")
    func absentConfig() throws {
        let outcome = try runProgram(driverd, ["--config", "/nonexistent/driverd.toml", "--check-config"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains("not found, the built-in defaults apply"))
    }

    @Test("a flag beats the config file")
    func flagBeatsFile() throws {
        let directory = TemporaryDirectory()
        let fileSocket = directory.file("from-file.sock")
        let daemon = try DaemonProcess(config: "[rpc]\nsocket = \"\(fileSocket)\"\n", directory: directory)
        // DaemonProcess passes --socket, which must win.
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(!FileManager.default.fileExists(atPath: fileSocket))
    }
}
