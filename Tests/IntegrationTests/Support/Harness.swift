import BackendContract
import DriverAPI
import Foundation
import SQLiteKit
import JSONRPC
import NMEASynth
import Testing

/// What the integration suites share: a daemon on gpsd or on dispatch-sim, waiting for its GPS state,
/// draining its outbox, synthesising logs, reading its store.
enum Harness {
    static func config(backend: SimProcess, credentials: Bool = true) -> String {
        """
        [gps]
        watch = "continuous"
        [backend]
        url = "\(backend.base)"
        """ + (credentials ? "\nusername = \"rider1\"\npassword = \"demo-password\"\n" : "\n")
    }

    static func outbox(_ daemon: DaemonProcess) throws -> OutboxStatus {
        try daemon.client().call(Methods.outboxStatus, NoParams())
    }

    /// Flushes until nothing waits (bounded).
    static func drain(_ daemon: DaemonProcess, timeout: Duration = .seconds(90)) throws -> OutboxStatus {
        var status: OutboxStatus?
        try waitUntil("the outbox drained", timeout: timeout, detail: "\(status.map { "\($0)" } ?? "")\n\(daemon.log)") {
            status = try daemon.client(timeout: .seconds(60)).call(Methods.outboxFlush, NoParams())
            return status!.pings + status!.items == 0
        }
        return status!
    }

    static let continuous = "[gps]\nwatch = \"continuous\"\n"

    static func daemon(gpsd: String, config: String = continuous, directory: TemporaryDirectory = TemporaryDirectory()) throws -> DaemonProcess {
        try DaemonProcess(arguments: ["--gpsd", gpsd], config: config, directory: directory)
    }

    static func status(_ daemon: DaemonProcess) throws -> GPSStatus {
        try daemon.client().call(Methods.gpsStatus, NoParams())
    }

    /// Polls gps.status until `condition` holds; returns the link states seen on the way.
    @discardableResult
    static func waitFor(_ daemon: DaemonProcess, timeout: Duration = .seconds(60), _ condition: (GPSStatus) -> Bool) throws -> (GPSStatus, Set<String>) {
        var seen: Set<String> = []
        var last: GPSStatus?
        try waitUntil("gps.status condition", timeout: timeout, detail: "last status: \(last.map { "\($0)" } ?? "none"); links seen: \(seen)\n\(daemon.log)") {
            let status = try Self.status(daemon)
            seen.insert(status.link.rawValue)
            last = status
            return condition(status)
        }
        return (last!, seen)
    }

    /// Waits for the replay to end (driverd has its last fix, `GPSFake.played(to:)`, or nothing came for 30 s; then
    /// no fix for 3 s; gpsfake itself may spin instead of exiting) and the
    /// counters to settle: a busy daemon may still be reading what gpsd sent before the kill, and a standing van's
    /// pings wait up to 2 minutes for the disk, so settled is the fixes unchanged for 3 s and nothing waiting.
    static func settled(_ daemon: DaemonProcess, fake: GPSFake, minimumFixes: Int = 1, timeout: Duration = .seconds(120)) throws -> GPSStatus {
        _ = try waitFor(daemon, timeout: timeout) { status in
            status.fixesSeen >= minimumFixes && (status.lastFixAge ?? 0) > 3 && (fake.played(to: status) || (status.lastFixAge ?? 0) > 30)
        }
        return try readToEnd(daemon, fake: fake, timeout: timeout + .seconds(150))
    }

    /// Lets a held replay (`GPSFake(leadIn:)`) go once driverd watches gpsd.
    static func play(_ fake: GPSFake, to daemon: DaemonProcess) throws {
        try waitFor(daemon, timeout: .seconds(120)) { $0.link == .connected || $0.link == .noFix }
        fake.play()
    }

    /// The replay stopped (gpsfake killed), and driverd has read what gpsd still had and recorded its pings.
    static func readToEnd(_ daemon: DaemonProcess, fake: GPSFake, timeout: Duration = .seconds(270)) throws -> GPSStatus {
        fake.kill()
        var fixes = -1
        var since = ContinuousClock.now
        // Settled means driverd read gpsd's end (its link left connected), so nothing is still buffered in its
        // socket: on a loaded machine a reader can pause for seconds mid-log, and a quiet spell alone misleads.
        return try waitFor(daemon, timeout: timeout) { status in
            if status.fixesSeen != fixes {
                fixes = status.fixesSeen
                since = .now
            }
            let readToEnd = status.link == .lost || status.link == .connecting
            return readToEnd && ContinuousClock.now - since >= .seconds(3) && status.pingsPending == 0
        }.0
    }

    static func log(_ name: String) throws -> String {
        try #require(GPSFake.sharedLog(name), "skipped: ../shared/testdata/nmea/\(name) is not beside this checkout")
    }

    /// A ping as the store keeps it.
    struct StoredPing: Decodable {
        var fix_time: Double
        var motion: String
        var recorded_at: Double
        var time_source: String?
        var latitude: Double
        var longitude: Double
    }

    static func synthesise(_ route: SyntheticRoute, _ directory: TemporaryDirectory, _ name: String = "log.nmea") throws -> String {
        let path = directory.file(name)
        try NMEAWriter.log(route).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Every ping in a stopped daemon's store, oldest first.
    static func storedPings(_ daemon: DaemonProcess) throws -> [StoredPing] {
        try readStateDatabase(daemon.directory.file("state")) { try $0.records(StoredPing.self, sql: "SELECT * FROM ping ORDER BY fix_time") }
    }
}
