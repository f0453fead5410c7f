import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// A parked van's radio: one burst per saver interval, the backend told when the next is due, the WebSocket kept
/// through a carrier NAT only by a keepalive sent when the link is quiet.
@Suite("Parked means quiet", .ownThread)
struct ParkedRadioTests {
    /// A unit off shift with no receiver: nothing to send but the keepalive.
    private static func quietUnit(_ sim: SimProcess, keepalive: Int) throws -> DaemonProcess {
        try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Harness.config(backend: sim) + """
            [uplink]
            keepalive_seconds = \(keepalive)
            """, onShift: false)
    }

    /// A receiver parked with 5 m of scatter (an epoch every 0.25 s) and an ignition file saying off.
    private static func parkedWithIgnitionOff(seconds: Int, _ directory: TemporaryDirectory) throws -> (GPSFake, ignition: String) {
        let fake = try GPSFake(log: Harness.synthesise(RoutePresets.parked(seconds: seconds, noise: 5), directory, "parked.nmea"), delay: 0.25)
        let ignition = directory.file("ignition")
        try "0\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        return (fake, ignition)
    }

    private static func webSocketOpen(_ daemon: DaemonProcess) throws {
        try waitUntil("the WebSocket open", detail: daemon.log) { try Harness.outbox(daemon).transport == .websocket }
    }

    @Test("a carrier NAT that forgets a connection idle for 15 s: a keepalive of 10 s keeps the WebSocket and a push after 30 quiet seconds arrives at once; one of 30 s loses it, and the push sent into the forgotten mapping arrives after the unit's next packet, over a new connection", .tags(.long))
    func carrierNAT() async throws {
        // Kept: a keepalive inside the NAT's timeout.
        let keptSim = try SimProcess(arguments: ["--nat-idle-seconds", "15"])
        let kept = try Self.quietUnit(keptSim, keepalive: 10)
        // Lost: a keepalive past it.
        let lostSim = try SimProcess(arguments: ["--nat-idle-seconds", "15"])
        let lost = try Self.quietUnit(lostSim, keepalive: 30)
        try Self.webSocketOpen(kept)
        try Self.webSocketOpen(lost)
        let opened = ContinuousClock.now
        try await Task.sleep(for: .seconds(18))
        // The lost unit's mapping is gone by now (15 s of quiet); its unit cannot know.
        _ = try await SimHTTP(base: lostSim.base).request(.POST, "/sim/messages", json: ["driverId": "drv-1", "text": "into the void"])
        try await Task.sleep(for: .seconds(12))
        _ = try await SimHTTP(base: keptSim.base).request(.POST, "/sim/messages", json: ["driverId": "drv-1", "text": "after 30 s of quiet"])
        try waitUntil("the kept unit's push", timeout: .seconds(5), detail: kept.log) {
            try kept.client().call(Methods.eventsPending, NoParams()).pending == 1
        }
        // One WebSocket all along (the NAT forgets the idle HTTPS connections of the login, as a carrier's does).
        #expect(keptSim.log.components(separatedBy: "rider WebSocket open").count - 1 == 1, "\(keptSim.log)")
        // The lost unit's keepalive, 30 s after the hello, meets a reset; it connects again and the backend sends what
        // came after the last push it saw.
        try waitUntil("the lost unit's push after its keepalive", timeout: .seconds(40), detail: lost.log + lostSim.log) {
            try lost.client().call(Methods.eventsPending, NoParams()).pending == 1
        }
        let waited = ContinuousClock.now - opened
        #expect(waited >= .seconds(29), "the push came before the keepalive: \(waited)")
        #expect(lostSim.log.components(separatedBy: "rider WebSocket open").count - 1 == 2, "\(lostSim.log)")
        try kept.stop()
        try lost.stop()
    }

    @Test("a van overnight behind a NAT that forgets it sooner than its keepalive: the fleet's configuration document still reaches it at its next keepalive, is applied, and the shorter keepalive it sets keeps the WebSocket from then on", .tags(.long))
    func overnightConfiguration() async throws {
        let sim = try SimProcess(arguments: ["--nat-idle-seconds", "15"])
        let http = SimHTTP(base: sim.base)
        // The test's own requests close their connections: the NAT would forget a pooled one too.
        let close = [("Connection", "close")]
        let key = try await http.request(.GET, "/sim/config", headers: close).decode(RemoteConfigTests.Overview.self).publicKey
        let directory = TemporaryDirectory()
        let ignition = directory.file("ignition")
        try "0\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        let unit = try Supervised(config: RemoteConfigTests.config(sim, key: key).replacingOccurrences(of: "auto_start = true", with: "auto_start = false") + """
            [ignition]
            path = "\(ignition)"
            [uplink]
            keepalive_seconds = 30
            """)
        try waitUntil("the WebSocket open", detail: unit.log) { try Harness.outbox(unit.current).transport == .websocket }
        // The NAT forgets the connection after 15 s; the document's push is lost in it until the unit's keepalive.
        try await Task.sleep(for: .seconds(18))
        let published = ContinuousClock.now
        let reply = try await http.request(
            .PUT, "/sim/config", headers: close, json: RemoteConfigTests.Publication(version: 2, settings: ["uplink.keepalive_seconds": .integer(10)]))
        #expect(reply.status == 200)
        let applied = try await RemoteConfigTests.ack(http, version: 2, .applied, timeout: .seconds(90), detail: unit.log + sim.log)
        #expect(applied.runningVersion == 2)
        #expect(ContinuousClock.now - published < .seconds(60), "the document took \(ContinuousClock.now - published)")
        // From now on the keepalive (10 s) keeps the mapping: no new WebSocket in 40 quiet seconds.
        try waitUntil("the WebSocket open again", detail: unit.log) { try Harness.outbox(unit.current).transport == .websocket }
        try await Task.sleep(for: .seconds(2))
        let opens = sim.log.components(separatedBy: "rider WebSocket open").count
        try await Task.sleep(for: .seconds(40))
        #expect(sim.log.components(separatedBy: "rider WebSocket open").count == opens, "the WebSocket was opened again: \(sim.log)")
        unit.stop()
    }

    @Test("overnight (off shift, the ignition off) the receiver is released: no fix is read; the shift's start has it watched again within seconds, and so does the ignition on")
    func overnightReceiver() async throws {
        let directory = TemporaryDirectory()
        let (fake, ignition) = try Self.parkedWithIgnitionOff(seconds: 900, directory)
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: """
            [ignition]
            path = "\(ignition)"
            [battery]
            poll_seconds = 1
            """, directory: directory, onShift: false)
        func fixes() throws -> Int { try Harness.status(daemon).fixesSeen }
        try waitUntil("a first fix", detail: daemon.log) { try fixes() > 0 }
        // Released after its first fix: nothing read for a while, though gpsd has an epoch every 0.25 s.
        try await Task.sleep(for: .seconds(2))
        let resting = try fixes()
        try await Task.sleep(for: .seconds(6))
        #expect(try fixes() == resting, "fixes read overnight")
        _ = try daemon.client().call(Methods.shiftStart, NoParams())
        try waitUntil("fixes after the shift's start", timeout: .seconds(8), detail: daemon.log) { try fixes() > resting }
        // Off shift again: released again; the ignition on (read each second here) has it watched again.
        _ = try daemon.client().call(Methods.shiftEnd, NoParams())
        try await Task.sleep(for: .seconds(4))
        let released = try fixes()
        try await Task.sleep(for: .seconds(5))
        #expect(try fixes() == released, "fixes read after the shift's end")
        try "1\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        try waitUntil("fixes after the ignition on", timeout: .seconds(8), detail: daemon.log) { try fixes() > released }
        fake.kill()
        try daemon.stop()
    }

    @Test("parked with the ignition off, pings go in one burst per saver interval and each batch says when the next is due; the ignition on ends the wait at once", .tags(.long))
    func saverBursts() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        let (fake, ignition) = try Self.parkedWithIgnitionOff(seconds: 400, directory)
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim) + """
            [shift]
            auto_start = true
            [ignition]
            path = "\(ignition)"
            [battery]
            poll_seconds = 1
            [sampling]
            saver_stationary_hz = 1.0
            [uplink]
            saver_batch_seconds = 20
            """, directory: directory)
        try await waitUntil("the first batch", detail: daemon.log) { try await http.locations().nextReportDue != nil }
        try await Task.sleep(for: .seconds(50))
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        let times = stats.batchLog.map(\.time)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        // Pings at 1 Hz (saver_stationary_hz), yet batches 20 s apart (5 s and 10 s before this release's saver cadence).
        #expect(!gaps.isEmpty && gaps.allSatisfy { $0 >= 19 }, "batch gaps \(gaps)")
        let locations = try await http.locations()
        let due = try #require(locations.nextReportDue), last = try #require(locations.lastReportAt)
        #expect(abs(due - last - 20) < 0.001, "told \(due - last) s")
        // The ignition on: saver mode ends and the pings go at the stationary cadence from the next power read, not
        // after the rest of the 20 s.
        let batchesBefore = stats.batchLog.count
        try await Task.sleep(for: .seconds(2))
        try "1\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        let turnedOn = ContinuousClock.now
        try await waitUntil("a batch after the ignition on", timeout: .seconds(15), detail: daemon.log) {
            try await http.request(.GET, "/sim/stats").decode(SimStats.self).batchLog.count > batchesBefore
        }
        #expect(ContinuousClock.now - turnedOn < .seconds(10), "the first batch after the ignition on took \(ContinuousClock.now - turnedOn)")
        let after = try await http.locations()
        #expect(after.nextReportDue.map { $0 - (after.lastReportAt ?? 0) } ?? 0 <= 10)
        fake.kill()
        try daemon.stop()
    }
}
