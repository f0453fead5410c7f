import DriverAPI
import DriverDomain
import Testing

/// The rules of remote configuration, pure: which documents a unit takes, how the layers stack, when a trial
/// is given up.
@Suite("Remote configuration rules")
struct RemoteConfigRulesTests {
    let file: [String: ConfigValue] = ["backend.url": .string("https://fleet.example"), "sampling.moving_hz": .double(1)]

    @Test("a newer document of remote keys with valid values gives the configuration, on top of the file")
    func accepted() throws {
        let layers = ConfigLayers(file: file)
        let document = RemoteConfigDocument(version: 3, settings: ["sampling.moving_hz": .double(0.5), "arrival.radius": .integer(150)])
        let config = try RemoteConfigRules.check(document, running: 2, newest: 2, layers: layers).get()
        #expect(config.rates.moving == 0.5 && config.arrivalRadius == 150 && config.backendURL == "https://fleet.example")
    }

    @Test("refused: not newer than what runs or was offered; a key not changeable remotely; a value out of range; with the reason")
    func refused() {
        let layers = ConfigLayers(file: file)
        func reason(_ document: RemoteConfigDocument, running: Int? = 2, newest: Int? = 2) -> String? {
            if case .failure(let refusal) = RemoteConfigRules.check(document, running: running, newest: newest, layers: layers) { return refusal.reason }
            return nil
        }
        #expect(reason(RemoteConfigDocument(version: 2, settings: [:]))?.contains("not newer than v2") == true)
        #expect(reason(RemoteConfigDocument(version: 1, settings: [:]), running: nil, newest: 4)?.contains("not newer than v4") == true)
        #expect(reason(RemoteConfigDocument(version: 3, settings: ["rpc.socket": .string("/tmp/x"), "backend.password": .string("x")]))
            == "not changeable remotely: backend.password, rpc.socket")
        #expect(reason(RemoteConfigDocument(version: 3, settings: ["fuel.litres": .integer(3)]))?.contains("fuel.litres unknown") == true)
        #expect(reason(RemoteConfigDocument(version: 3, settings: ["safety.speed_limit": .integer(500)]))?.hasPrefix("safety.speed_limit: 500 is invalid") == true)
        #expect(reason(RemoteConfigDocument(version: 3, settings: ["sampling.moving_hz": .string("fast")]))?.contains("sampling.moving_hz") == true)
        for key in ["rpc.socket", "daemon.state_dir", "backend.url", "backend.username", "backend.password", "backend.ca_file", "remote.public_key", "gps.gpsd", "update.public_key", "update.mode"] {
            #expect(!DaemonConfig.remoteKeys.contains(key), "\(key) must stay local")
        }
        // The fleet's reach, marked key by key: a new key is local until someone marks it.
        #expect(DaemonConfig.remoteKeys == [
            "daemon.log_level", "gps.max_horizontal_error", "motion.stationary_seconds", "battery.saver_threshold_percent",
            "battery.poll_seconds", "sampling.moving_hz", "sampling.stationary_hz", "sampling.saver_moving_hz", "sampling.saver_stationary_hz",
            "outbox.max_ping_age_hours", "outbox.max_pings", "uplink.moving_batch_seconds", "uplink.stationary_batch_seconds",
            "uplink.saver_batch_seconds", "uplink.keepalive_seconds",
            "uplink.urgent_retry_seconds", "uplink.retry_cap_seconds", "uplink.fleet_size", "uplink.backend_connect_rate", "safety.speed_limit", "safety.stale_fix_seconds", "arrival.mode", "arrival.radius",
            "arrival.dwell_seconds", "trips.idle_seconds", "harsh.braking_mps2", "harsh.acceleration_mps2",
            "vehicle.low_voltage", "vehicle.low_voltage_seconds", "vehicle.fault_check_seconds", "vehicle.parked_poll_seconds",
            "power.shutdown_on_low_voltage", "update.max_bytes_per_day", "update.quiet_minutes", "update.window", "health.report_minutes",
        ])
    }

    @Test("layers: the command line over the remote document over the file over the defaults; each key names its source")
    func layers() {
        var overrides = ConfigOverrides()
        overrides.gpsd = "127.0.0.1:1"
        let layers = ConfigLayers(file: file, remote: RemoteConfigDocument(version: 7, settings: ["sampling.moving_hz": .double(0.5)]), overrides: overrides)
        let config = layers.parse().config
        #expect(config.rates.moving == 0.5 && config.gpsd == "127.0.0.1:1")
        #expect(layers.source(of: "sampling.moving_hz") == .remote(version: 7) && layers.source(of: "sampling.moving_hz").description == "remote v7")
        #expect(layers.source(of: "backend.url") == .file && layers.source(of: "gps.gpsd") == .flag && layers.source(of: "arrival.mode") == .defaultValue)
    }

    @Test("a trial is run on its first and second start within five minutes and given up on the third; older starts and none do not count")
    func trial() {
        #expect(RemoteConfigTrial.decide(trial: 3, good: 2, earlierStarts: [], now: 1000) == .run(version: 3))
        #expect(RemoteConfigTrial.decide(trial: 3, good: 2, earlierStarts: [990], now: 1000) == .run(version: 3))
        #expect(RemoteConfigTrial.decide(trial: 3, good: 2, earlierStarts: [900, 990], now: 1000) == .rollBack(failed: 3, to: 2))
        #expect(RemoteConfigTrial.decide(trial: 3, good: nil, earlierStarts: [600, 690], now: 1000) == .run(version: 3))
        // Starts counted "in the future" (another boot's clock) are not this boot's.
        #expect(RemoteConfigTrial.decide(trial: 3, good: 2, earlierStarts: [5000, 6000], now: 1000) == .run(version: 3))
    }

    @Test("the fleet key is 32 bytes of base64")
    func publicKey() {
        #expect(isBase64Key("kOGBCiNmmOxur6QYbYqQCWj//c3lOSZS3pnzpskV5iw="))
        #expect(!isBase64Key("kOGBCiNmmOxur6QYbYqQCWj//c3lOSZS3pnzpskV5iw"))
        #expect(!isBase64Key("kOGBCiNmmOxur6QYbYqQCWj//c3lOSZS3pnzpskV5i=="))
        #expect(DaemonConfig.parse(["remote.public_key": .string("not a key")]).errors.map(\.key) == ["remote.public_key"])
    }
}
