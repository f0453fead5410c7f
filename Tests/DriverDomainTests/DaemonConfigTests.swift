import DriverAPI
import DriverDomain
import Testing

@Suite("Daemon configuration")
struct DaemonConfigTests {
    @Test("no keys means the documented defaults")
    func defaults() {
        let parsed = DaemonConfig.parse([:])
        #expect(parsed.errors.isEmpty && parsed.warnings.isEmpty)
        #expect(parsed.config.socketPath == "/run/driverd/driverd.sock")
        #expect(parsed.config.stateDirectory == "/var/lib/driverd")
        #expect(parsed.config.rpcGroup == "driver")
        #expect(parsed.config.maxLineBytes == 1 << 20)
        #expect(parsed.config.logLevel == .info)
    }

    @Test("valid values are taken")
    func valid() {
        let parsed = DaemonConfig.parse([
            "rpc.socket": .string("/tmp/x.sock"), "rpc.group": .string("fleet"), "rpc.max_line_bytes": .integer(4096),
            "daemon.state_dir": .string("/srv/d"), "daemon.log_level": .string("debug"), "daemon.log_target": .string("journal"),
        ])
        #expect(parsed.errors.isEmpty)
        #expect(parsed.config.socketPath == "/tmp/x.sock")
        #expect(parsed.config.rpcGroup == "fleet")
        #expect(parsed.config.maxLineBytes == 4096)
        #expect(parsed.config.stateDirectory == "/srv/d")
        #expect(parsed.config.logLevel == .debug)
        #expect(parsed.config.logTarget == .journal)
    }

    @Test("each bad value is named with its key, value and what is allowed", arguments: [
        ("rpc.socket", ConfigValue.string("relative.sock"), "expected an absolute path"),
        ("rpc.socket", .string("/" + String(repeating: "a", count: 120)), "shorter than 104 bytes"),
        ("rpc.max_line_bytes", .integer(10), "expected an integer from 1024 to 16777216"),
        ("rpc.max_line_bytes", .string("big"), "expected an integer"),
        ("rpc.group", .string(""), "expected a group name"),
        ("daemon.log_level", .string("loud"), "expected one of trace, debug, info"),
        ("daemon.log_target", .integer(1), "expected one of auto, journal, stderr"),
        ("daemon.state_dir", .bool(true), "expected an absolute path"),
    ])
    func invalid(key: String, value: ConfigValue, hint: String) throws {
        let parsed = DaemonConfig.parse([key: value])
        let issue = try #require(parsed.errors.first)
        #expect(parsed.errors.count == 1)
        #expect(issue.key == key)
        #expect(issue.description.hasPrefix("\(key): \(value) is invalid: "))
        #expect(issue.message.contains(hint))
        #expect(parsed.config == DaemonConfig(), "a bad value leaves the default")
    }

    @Test("unknown keys are warnings, not errors")
    func unknown() {
        let parsed = DaemonConfig.parse(["rpc.colour": .string("red")])
        #expect(parsed.errors.isEmpty)
        #expect(parsed.warnings == [ConfigIssue(key: "rpc.colour", message: "unknown key, ignored")])
    }
}
