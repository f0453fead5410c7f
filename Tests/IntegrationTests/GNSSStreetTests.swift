import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// GNSS as the street delivers it, through a real gpsd (gpsfake) into the real daemon: parked scatter, spikes,
/// a receiver that repeats one stale fix, a 10 Hz receiver. Synthesised with nmea-synth's conditions.
@Suite("GNSS on the street", .ownThread)
struct GNSSStreetTests {
    struct Parked: CustomTestStringConvertible, Sendable {
        var sigma: Double
        var testDescription: String { "σ \(sigma) m" }
    }

    @Test("parked in a street after a drive: stationary within 75 s, then 0.1 Hz and never moving", arguments: [Parked(sigma: 3), Parked(sigma: 8), Parked(sigma: 15)])
    func parkedInStreet(_ parked: Parked) throws {
        let directory = TemporaryDirectory()
        let route = RoutePresets.street(parkSeconds: 600, sigma: parked.sigma)
        let fake = try GPSFake(log: try Harness.synthesise(route, directory), delay: 0.01)
        let daemon = try Harness.daemon(gpsd: fake.endpoint, directory: directory)
        let status = try Harness.settled(daemon, fake: fake, minimumFixes: 600)
        try daemon.stop()
        let pings = try Harness.storedPings(daemon)
        let parkedAt = route.startTime + 30
        let stationary = try #require(pings.first { $0.motion == "stationary" && $0.fix_time >= parkedAt }, "never stationary: \(status)")
        #expect(stationary.fix_time - parkedAt <= 75, "stationary \(stationary.fix_time - parkedAt) s after parking")
        let after = pings.filter { $0.fix_time > stationary.fix_time }
        #expect(after.allSatisfy { $0.motion == "stationary" }, "moving again: \(after.filter { $0.motion != "stationary" }.count) pings")
        let minutes = (route.startTime + 630 - stationary.fix_time) / 60
        let perMinute = Double(after.count) / minutes
        #expect(perMinute <= 6.5, "\(perMinute) pings a minute parked")
        #expect(perMinute >= 5, "\(perMinute) pings a minute parked (the 0.1 Hz heartbeat must go on)")
        #expect(daemon.log.components(separatedBy: "motion: stationary").count - 1 == 1, "\(daemon.log)")
    }

    @Test("a drive with 2 % multipath spikes of 150 m to 2 km: every spike is rejected and counted, none reaches the backend")
    func spikesNeverReachTheBackend() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        var route = RoutePresets.driving(laps: 4)
        route.spikes = .init(share: 0.02, minMetres: 150, maxMetres: 2000)
        route.dropouts = [.init(at: 200, seconds: 40)]
        let epochs = route.epochs()
        // Every spike counts: the replay waits for driverd to connect.
        let fake = try GPSFake(log: try Harness.synthesise(route, directory), delay: 0.01, leadIn: .seconds(2))
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim), directory: directory)
        try Harness.play(fake, to: daemon)
        let gps = try Harness.settled(daemon, fake: fake, minimumFixes: 500)
        _ = try Harness.drain(daemon)
        let received = try await http.locations().pings
        #expect(received.count == gps.pingsRecorded && received.count > 400)
        let truth = Dictionary(epochs.map { (($0.elapsed + route.startTime).rounded(), $0.truth) }, uniquingKeysWith: { a, _ in a })
        var spikesReceived = 0
        for ping in received {
            let spot = try #require(truth[ping.timestamp.rounded()], "a ping at \(ping.timestamp) that was never sent")
            if Geo.distance(latitude1: ping.lat, longitude1: ping.lng, latitude2: spot.lat, longitude2: spot.lon) > 50 { spikesReceived += 1 }
        }
        let injected = epochs.filter(\.spike).count
        #expect(injected >= 10)
        #expect(spikesReceived == 0, "\(spikesReceived) of \(injected) spikes reached the backend")
        #expect((gps.fixesRejected?["jump"] ?? 0) >= injected, "\(gps.fixesRejected ?? [:]), \(injected) injected")
        try daemon.stop()
    }

    @Test("a receiver that repeats one stale fix is noFix: one journal warning, and the backend gets a heartbeat instead of an old position", .tags(.long))
    func staleRepeatedFix() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        // Two laps: fixes go on long after the stale spell (40 to 140 s), so that a loaded machine, where the
        // heartbeat comes late, still sees them come back before the log ends.
        var route = RoutePresets.driving(laps: 2)
        route.staleSpans = [.init(at: 40, seconds: 100)]
        let epochs = route.epochs()
        let staleTime = try #require(epochs.first { $0.stale }?.fix?.time)
        // 0.1 s a sentence: three times real time, so the stale spell lasts about 33 s of wall time.
        let fake = try GPSFake(log: try Harness.synthesise(route, directory), delay: 0.1)
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim), directory: directory)
        // Generous bounds: on a loaded machine (the whole suite at once) gpsfake and the daemon start late; the
        // test judges what happens, not how fast.
        try Harness.waitFor(daemon, timeout: .seconds(150)) { $0.link == .noFix && $0.fixesSeen > 40 }
        // The heartbeat goes out with the next attempt (every 5 s while moving).
        try await waitUntil("a heartbeat at the backend", timeout: .seconds(60), detail: daemon.log) { try await !http.locations().heartbeats.isEmpty }
        let heartbeat = try #require(try await http.locations().heartbeats.first)
        #expect(heartbeat.gps == "noFix" && heartbeat.lastFixTime == staleTime)
        #expect(heartbeat.timeSource != .unsynced)
        // Fixes come back after the stale spell.
        try Harness.waitFor(daemon, timeout: .seconds(150)) { $0.link == .connected && ($0.lastFix?.time ?? 0) > staleTime + 10 }
        let status = try Harness.settled(daemon, fake: fake, minimumFixes: 100)
        _ = try Harness.drain(daemon)
        let locations = try await http.locations()
        #expect(locations.pings.filter { $0.timestamp == staleTime }.count <= 1, "the stale fix was sent as new")
        #expect((status.fixesRejected?["time"] ?? 0) >= 10, "\(status.fixesRejected ?? [:])")
        let warnings = daemon.log.components(separatedBy: "no usable fix").count - 1
        #expect(warnings == 1, "\(warnings) warnings\n\(daemon.log)")
        #expect(daemon.log.contains("usable fixes again"))
        try daemon.stop()
    }

    @Test("a 10 Hz receiver records what the policy says for 1 Hz: one ping a second moving, 0.1 Hz parked")
    func tenHertzReceiver() throws {
        let directory = TemporaryDirectory()
        var route = RoutePresets.street(parkSeconds: 240, sigma: 3)
        route.hz = 10
        let fake = try GPSFake(log: try Harness.synthesise(route, directory), delay: 0.002)
        let daemon = try Harness.daemon(gpsd: fake.endpoint, directory: directory)
        let status = try Harness.settled(daemon, fake: fake, minimumFixes: 2000)
        let expected = NMEALog.expectedPings(route.samples().compactMap { $0 })
        for mode in ["moving", "stationary"] {
            let want = expected[mode] ?? 0, got = status.pingsByMotion[mode] ?? 0
            #expect(want > 10)
            #expect(abs(got - want) <= max(3, want / 10), "\(mode): recorded \(got), policy \(want)")
        }
        #expect(status.fixesSeen >= 2400, "\(status.fixesSeen) fixes seen of 2700")
        #expect((status.fixesRejected?["jump"] ?? 0) == 0, "\(status.fixesRejected ?? [:])")
        try daemon.stop()
    }
}
