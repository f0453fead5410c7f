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

    @Test("the vehicle's keys; the ignition's source resolves from what is configured")
    func vehicleKeys() {
        #expect(DaemonConfig().effectiveIgnitionSource == .gps)
        var withFile = DaemonConfig()
        withFile.ignitionPath = "/run/ignition"
        #expect(withFile.effectiveIgnitionSource == .file)
        let parsed = DaemonConfig.parse([
            "vehicle.adapter": .string("192.168.0.10:35000"), "vehicle.baud_rate": .integer(115200), "vehicle.low_voltage": .double(11.5),
            "ignition.path": .string("/run/ignition"), "power.shutdown_on_low_voltage": .bool(true),
        ])
        #expect(parsed.errors.isEmpty)
        #expect(parsed.config.effectiveIgnitionSource == .obd && parsed.config.vehicleBaudRate == 115200 && parsed.config.shutdownOnLowVoltage)
        let bad = DaemonConfig.parse([
            "vehicle.adapter": .string("nowhere"), "vehicle.baud_rate": .integer(12345), "ignition.source": .string("can"),
        ])
        #expect(bad.errors.map(\.key).sorted() == ["ignition.source", "vehicle.adapter", "vehicle.baud_rate"])
        let lonely = DaemonConfig.parse(["ignition.source": .string("obd")])
        #expect(lonely.warnings.map(\.key) == ["ignition.source"])
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

    @Test("every key refuses a value of the wrong kind, naming the key, the value and what is allowed")
    func everyKeyIsValidated() throws {
        for key in DaemonConfig.knownKeys {
            let parsed = DaemonConfig.parse([key: .other("a TOML array")])
            let issue = try #require(parsed.errors.first, "\(key) accepted an array")
            #expect(issue.description.hasPrefix("\(key): a TOML array is invalid: expected "), "\(issue)")
        }
    }

    @Test("every number key names its range when the value is outside it", arguments: [
        ("rpc.max_line_bytes", ConfigValue.integer(100), "from 1024 to 16777216"),
        ("battery.saver_threshold_percent", .integer(101), "from 0 to 100"),
        ("battery.poll_seconds", .integer(0), "from 1 to 3600"),
        ("sampling.moving_hz", .double(20), "from 0.001 to 10"),
        ("sampling.stationary_hz", .integer(0), "from 0.001 to 10"),
        ("sampling.saver_moving_hz", .double(-1), "from 0.001 to 10"),
        ("sampling.saver_stationary_hz", .double(11), "from 0.001 to 10"),
        ("outbox.max_ping_age_hours", .integer(9000), "from 1 to 8760"),
        ("outbox.max_pings", .integer(10), "from 1000 to 100000000"),
        ("safety.speed_limit", .double(0.1), "from 0.5 to 50"),
        ("safety.stale_fix_seconds", .integer(0), "from 1 to 300"),
        ("auth.max_login_age_hours", .integer(1000), "from 0.0005 to 720"),
    ])
    func ranges(key: String, value: ConfigValue, range: String) throws {
        let issue = try #require(DaemonConfig.parse([key: value]).errors.first)
        #expect(issue.description == "\(key): \(value) is invalid: expected \(issue.message.split(separator: "expected ", maxSplits: 1).last!)")
        #expect(issue.message.contains(range), "\(issue)")
    }

    @Test("every key's default reads back as itself")
    func defaultsRoundTrip() throws {
        let defaults = DaemonConfig()
        for key in DaemonConfig.knownKeys {
            let value = try #require(defaults.value(of: key))
            let parsed = DaemonConfig.parse([key: value])
            #expect(parsed.errors.isEmpty, "\(key) = \(value): \(parsed.errors)")
            #expect(parsed.config == defaults, "\(key)")
        }
    }

    @Test("an unknown key close to a known one gets a suggestion", arguments: [
        ("sampling.movinghz", "sampling.moving_hz"),
        ("gps.moving_hz", "sampling.moving_hz"),
        ("Backend.URL", "backend.url"),
        ("safety.speedlimit", "safety.speed_limit"),
    ])
    func suggestion(typo: String, known: String) {
        let parsed = DaemonConfig.parse([typo: .string("x")])
        #expect(parsed.warnings == [ConfigIssue(key: typo, message: "unknown key, ignored (did you mean \(known)?)")])
    }

    @Test("settings that contradict each other are warned about")
    func consistency() {
        let parsed = DaemonConfig.parse([
            "backend.username": .string("unit-7"), "sampling.saver_moving_hz": .double(2),
        ])
        #expect(parsed.errors.isEmpty)
        #expect(parsed.warnings.map(\.key) == ["backend.password", "backend.url", "sampling.saver_moving_hz"])
        #expect(parsed.warnings[2].message.contains("above sampling.moving_hz"))
    }

    @Test("the effective configuration hides the password, and only when one is set")
    func effectiveValues() {
        var config = DaemonConfig()
        #expect(config.effectiveValues["backend.password"] == "\"\"")
        config.backendPassword = "hunter2"
        config.backendURL = "https://fleet.example.com"
        let values = config.effectiveValues
        #expect(values["backend.password"] == "\"<redacted>\"")
        #expect(values["backend.url"] == "\"https://fleet.example.com\"")
        #expect(values["sampling.moving_hz"] == "1.0")
        #expect(Set(values.keys) == Set(DaemonConfig.knownKeys))
        #expect(!values.values.contains { $0.contains("hunter2") })
    }

    @Test("secret values in a config file's text are redacted, the rest kept")
    func redaction() {
        let text = """
            [backend]
            # password = "commented"
            url = "https://fleet.example.com"
              password="hunter2"
            backend.api_token = 'abc'
            [gps]
            gpsd = "127.0.0.1:2947"
            """
        let redacted = ConfigRedaction.redact(text)
        #expect(redacted == """
            [backend]
            # password = "commented"
            url = "https://fleet.example.com"
              password= "<redacted>"
            backend.api_token = "<redacted>"
            [gps]
            gpsd = "127.0.0.1:2947"
            """)
    }
}
