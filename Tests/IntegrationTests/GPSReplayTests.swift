import DriverAPI
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// Real receiver logs and synthesised drives through a real gpsd (gpsfake), into the real daemon.
/// Tests that replay the shared receiver logs are skipped (with this message) where `../shared` is absent.
let sharedLogs: ConditionTrait = .enabled(
    if: GPSFake.sharedLog("signalk-gps.log") != nil, "../shared/testdata/nmea is not beside this checkout")

@Suite("GPS through gpsd", .ownThread)
struct GPSReplayTests {
    @Test("the stationary log (20 min of jitter and slow walking) never flips to moving; 0.1 Hz pings", sharedLogs)
    func stationaryJitter() throws {
        let path = try Harness.log("signalk-gps.log")
        let fake = try GPSFake(log: path, delay: 0.002, leadIn: .seconds(2))  // counts every fix: driverd connected first
        let daemon = try Harness.daemon(gpsd: fake.endpoint)
        try Harness.play(fake, to: daemon)
        let status = try Harness.settled(daemon, fake: fake)
        #expect(status.pingsByMotion["moving"] == nil, "\(status.pingsByMotion)")
        let expected = NMEALog.expectedPings(try NMEALog.fixes(path))
        #expect(expected["moving"] == nil)
        let recorded = status.pingsByMotion["stationary"] ?? 0
        let want = try #require(expected["stationary"], "policy: \(expected)")
        // 1201 epochs at 0.1 Hz: about 121; ±10 % for epochs gpsd merges or splits when fed fast.
        #expect(abs(recorded - want) <= want / 10, "recorded \(recorded), policy \(expected)")
        #expect(status.fixesSeen >= 1100)
    }

    @Test("city driving: ping counts per mode match the policy for the log", sharedLogs)
    func cityDriving() throws {
        let path = try Harness.log("20100411_Geko_Regensburg.txt")
        // 790 epochs in 9,931 sentences (satellites in view each second: gpsd's SKY reports run to kilobytes). At 2 ms a
        // sentence, 40 epochs and about 100 KB a second: a reader starved of the CPU for a second or two, 12 tests at
        // once beside a browser, filled its socket, and gpsd drops what does not fit (a city drive then recorded 138 to
        // 260 of its 767 moving pings). At 5 ms, 16 epochs a second.
        let fake = try GPSFake(log: path, delay: 0.005, leadIn: .seconds(2))  // counts every fix: driverd connected first
        let daemon = try Harness.daemon(gpsd: fake.endpoint)
        try Harness.play(fake, to: daemon)
        let status = try Harness.settled(daemon, fake: fake)
        let expected = NMEALog.expectedPings(try NMEALog.fixes(path))
        for mode in ["moving", "stationary"] {
            let want = expected[mode] ?? 0, got = status.pingsByMotion[mode] ?? 0
            #expect(want > 0)
            #expect(abs(got - want) <= max(3, want / 10), "\(mode): recorded \(got), policy \(want); all \(status.pingsByMotion)")
        }
    }

    @Test("a receiver that never fixes records nothing and reports noFix", sharedLogs)
    func neverFixes() throws {
        let fake = try GPSFake(log: try Harness.log("skytraq.log"), delay: 0.05)
        let daemon = try Harness.daemon(gpsd: fake.endpoint)
        let (_, links) = try Harness.waitFor(daemon) { $0.link == .noFix }
        // Through the whole log (166 lines at 50 ms, and a second more), every look finds nothing recorded. (gpsfake
        // gives no sign of the log's end while a client is connected.)
        let end = ContinuousClock.now + .seconds(166 * 0.05 + 1)
        while ContinuousClock.now < end {
            let status = try Harness.status(daemon)
            #expect(status.pingsRecorded == 0 && status.fixesSeen == 0, "\(status)")
            usleep(250_000)
        }
        let status = try Harness.status(daemon)
        #expect(status.pingsRecorded == 0 && status.fixesSeen == 0 && status.lastFix == nil)
        #expect(links.contains("noFix"))
        let fix = Result { try daemon.client().call(Methods.gpsFix, NoParams()) }
        guard case .failure(RPCClient.Failure.server(let error)) = fix else {
            Issue.record("gps.fix before any fix must fail, got \(fix)")
            return
        }
        #expect(error.kind == .unavailable)
    }

    @Test("fix lost and regained: the loss is reported and recording resumes", sharedLogs)
    func fixLoss() throws {
        let path = try Harness.log("meinberg-gps164.log")
        // 101 lines at 0.1 s: 10 s, held until driverd watches (its start on a loaded machine took longer).
        let fake = try GPSFake(log: path, delay: 0.1, leadIn: .seconds(2))
        let daemon = try Harness.daemon(gpsd: fake.endpoint)
        try Harness.play(fake, to: daemon)
        let (_, links) = try Harness.waitFor(daemon) { $0.fixesSeen > 0 && ($0.lastFixAge ?? 0) > 3 }
        let status = try Harness.settled(daemon, fake: fake, minimumFixes: 60)
        _ = links
        // The receiver goes silent for 20 s (RMC status V, so gpsd sends no TPV): a loss, then fixes again.
        #expect(status.fixLosses == 1, "\(status)")
        #expect(daemon.log.contains("no fix for 21 s"))
        #expect(status.pingsRecorded >= 5)
        #expect(status.pingsByMotion["moving"] == nil, "a fix regained metres away is not movement")
    }

    @Test("time going backwards, duplicate epochs and garbage between sentences never stop recording", sharedLogs)
    func hostileInput() throws {
        for name in ["bt451.log", "humminbird-M37.log"] {
            // Looped: a pass takes 1 to 1.6 s, and on a loaded machine driverd once started after the only pass had
            // ended (connected, no fix for 120 s). It reads three passes from its first fix on; each new pass is one
            // more jump back in time.
            let log = try Harness.log(name)
            let fake = try GPSFake(log: log, delay: 0.01, loop: true)
            let daemon = try Harness.daemon(gpsd: fake.endpoint)
            _ = try Harness.waitFor(daemon, timeout: .seconds(60)) { $0.fixesSeen > 0 }
            let pass = Double(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count) * 0.01
            Thread.sleep(forTimeInterval: 3 * pass + 1)
            let status = try Harness.readToEnd(daemon, fake: fake)
            #expect(status.pingsRecorded > 0, "\(name)")
            #expect(daemon.process.isRunning)
        }
        // Our own drive with NUL bytes and junk between the sentences.
        let directory = TemporaryDirectory()
        var text = ""
        for (index, line) in NMEAWriter.log(RoutePresets.driving(laps: 1)).split(separator: "\r\n").enumerated() {
            text += line + "\r\n"
            if index % 7 == 0 { text += "\u{0}\u{0}garbage\u{7}$GPXXX,1,2*00\r\n" }
        }
        try text.write(toFile: directory.file("junk.nmea"), atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: directory.file("junk.nmea"), delay: 0.002)
        let daemon = try Harness.daemon(gpsd: fake.endpoint)
        let status = try Harness.settled(daemon, fake: fake, minimumFixes: 150)
        #expect((status.pingsByMotion["moving"] ?? 0) > 100, "\(status)\n\(daemon.log)")
    }

    @Test("gpsd absent at start, then started, then killed mid-replay and restarted: the daemon follows by itself")
    func gpsdComesAndGoes() throws {
        let port = GPSFake.freePort()
        let daemon = try Harness.daemon(gpsd: "127.0.0.1:\(port)")
        try Harness.waitFor(daemon, timeout: .seconds(20)) { $0.link == .lost }
        let synthetic = TemporaryDirectory()
        try NMEAWriter.log(RoutePresets.parked(seconds: 3600)).write(toFile: synthetic.file("parked.nmea"), atomically: true, encoding: .utf8)
        var fake: GPSFake? = try GPSFake(log: synthetic.file("parked.nmea"), delay: 0.01, port: port)
        let before = try Harness.waitFor(daemon, timeout: .seconds(30)) { $0.link == .connected && $0.fixesSeen > 20 }.0
        fake?.kill()
        fake = nil
        try Harness.waitFor(daemon, timeout: .seconds(20)) { $0.link == .lost }
        fake = try GPSFake(log: synthetic.file("parked.nmea"), delay: 0.01, port: port)
        try Harness.waitFor(daemon, timeout: .seconds(40)) { $0.link == .connected && $0.fixesSeen > before.fixesSeen + 20 }
        #expect(daemon.process.isRunning)
        _ = fake
    }

    @Test("battery saver from power_supply, ignition from a file, rate requests that die with their connection")
    func powerAndRequests() throws {
        let directory = TemporaryDirectory()
        let supplies = directory.file("power_supply")
        try FileManager.default.createDirectory(atPath: supplies + "/BAT0", withIntermediateDirectories: true)
        try "Battery\n".write(toFile: supplies + "/BAT0/type", atomically: true, encoding: .utf8)
        try "Discharging\n".write(toFile: supplies + "/BAT0/status", atomically: true, encoding: .utf8)
        try "15\n".write(toFile: supplies + "/BAT0/capacity", atomically: true, encoding: .utf8)
        let ignition = directory.file("ignition")
        let synthetic = directory.file("drive.nmea")
        try NMEAWriter.log(RoutePresets.driving(laps: 20)).write(toFile: synthetic, atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: synthetic, delay: 0.1)
        let config = Harness.continuous + """
            [battery]
            power_supply_dir = "\(supplies)"
            poll_seconds = 1
            [ignition]
            path = "\(ignition)"
            """
        let daemon = try Harness.daemon(gpsd: fake.endpoint, config: config, directory: directory)
        let client = try daemon.client()
        func sampling() throws -> SamplingStatus { try client.call(Methods.agentStatus, NoParams()).sampling }

        try Harness.waitFor(daemon) { $0.motion == .moving }
        try waitUntil("battery saver", timeout: .seconds(10)) { try sampling().batteryMode == .saver }
        #expect(try sampling().samplingHz == 0.2)

        // Mains online: normal rates again.
        try FileManager.default.createDirectory(atPath: supplies + "/AC", withIntermediateDirectories: true)
        try "Mains\n".write(toFile: supplies + "/AC/type", atomically: true, encoding: .utf8)
        try "1\n".write(toFile: supplies + "/AC/online", atomically: true, encoding: .utf8)
        try waitUntil("normal rates on mains", timeout: .seconds(10)) { try sampling().batteryMode == .normal }
        #expect(try sampling().samplingHz == 1)

        // Ignition off overrides GPS: stationary and saver, whatever the fixes say.
        try "0\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        try Harness.waitFor(daemon, timeout: .seconds(10)) { $0.motion == .stationary }
        #expect(try sampling().ignition == .off)
        #expect(try sampling().batteryMode == .saver)
        try "1\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        try Harness.waitFor(daemon, timeout: .seconds(10)) { $0.motion == .moving }

        // Stationary by ignition again, then a live map asks for 1 Hz... capped at 0.2 Hz in saver mode.
        try FileManager.default.removeItem(atPath: supplies + "/AC")
        try "0\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        try Harness.waitFor(daemon, timeout: .seconds(10)) { $0.motion == .stationary }
        let map = try daemon.client()
        let answer = try map.call(Methods.gpsRequestRate, RequestRateParams(hz: 1))
        #expect(answer.effectiveHz == 0.2)
        #expect(try sampling().requests.map(\.hz) == [1])
        #expect(try sampling().requests.first?.pid == getpid())
        // Ignition on, battery fine: the request takes effect in full while the map is connected.
        try "1\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: supplies + "/BAT0")
        try waitUntil("normal rates again", timeout: .seconds(10)) { try sampling().batteryMode == .normal }
        #expect(try sampling().samplingHz == 1)
        _ = map  // the request lives as long as this connection
    }

    @Test("a rate request lasts as long as its connection")
    func requestLifetime() throws {
        let directory = TemporaryDirectory()
        try NMEAWriter.log(RoutePresets.parked(seconds: 3600)).write(toFile: directory.file("parked.nmea"), atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: directory.file("parked.nmea"), delay: 0.05)
        let daemon = try Harness.daemon(gpsd: fake.endpoint)
        try Harness.waitFor(daemon) { $0.motion == .stationary }
        let status = try daemon.client()
        #expect(try status.call(Methods.agentStatus, NoParams()).sampling.samplingHz == 0.1)
        do {
            let map = try daemon.client()
            #expect(try map.call(Methods.gpsRequestRate, RequestRateParams(hz: 1)).effectiveHz == 1)
            #expect(try status.call(Methods.agentStatus, NoParams()).sampling.samplingHz == 1)
            let bad = Result { try map.call(Methods.gpsRequestRate, RequestRateParams(hz: 50)) }
            if case .failure(RPCClient.Failure.server(let error)) = bad { #expect(error.kind == .invalidParams) } else { Issue.record("hz 50 must be refused") }
        }
        // The map's connection is closed: its request is gone.
        try? waitUntil("the request gone", timeout: .seconds(5)) { try status.call(Methods.agentStatus, NoParams()).sampling.samplingHz == 0.1 }
        let after = try status.call(Methods.agentStatus, NoParams()).sampling
        #expect(after.samplingHz == 0.1 && after.requests.isEmpty)
    }

    @Test("events.subscribe streams recorded fixes as gps.fix notifications")
    func subscription() throws {
        let directory = TemporaryDirectory()
        try NMEAWriter.log(RoutePresets.driving(laps: 5)).write(toFile: directory.file("drive.nmea"), atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: directory.file("drive.nmea"), delay: 0.02)
        let daemon = try Harness.daemon(gpsd: fake.endpoint)
        let client = try daemon.client()
        let bad = Result { try client.call(Methods.eventsSubscribe, SubscribeParams(topics: ["gps.nope"])) }
        if case .failure(RPCClient.Failure.server(let error)) = bad { #expect(error.kind == .invalidParams) } else { Issue.record("unknown topic must be refused") }
        #expect(try client.call(Methods.eventsSubscribe, SubscribeParams(topics: ["gps.fix"])).topics == ["gps.fix"])
        var times: [Double] = []
        while times.count < 10 {
            let message = try client.readReply()
            #expect(message["method"] == .string("gps.fix"))
            #expect(message["id"] == nil)
            let fix = try Codec.decode(Fix.self, from: try #require(message["params"]))
            times.append(fix.time)
        }
        #expect(times == times.sorted())
        // driverctl follows the same stream.
        let follow = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "gps"])
        #expect(follow.stdout.contains("link      connected"))
    }
}
