import DriverAPI
import Foundation
import NMEASynth
import Testing

@Suite("Full disk", .ownThread)
struct FullDiskTests {
    @Test("over a file-size limit commits fail with a clear error, the daemon keeps answering and keeps the pings; they are written when space returns")
    func fileSizeLimit() throws {
        let directory = TemporaryDirectory()
        let drive = directory.file("drive.nmea")
        try NMEAWriter.log(RoutePresets.driving(laps: 5)).write(toFile: drive, atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: drive, delay: 0.02)
        let daemon = try Harness.daemon(gpsd: fake.endpoint, directory: directory)
        try Harness.waitFor(daemon) { $0.pingsRecorded > 20 }

        // No file of the daemon's may grow past 4 KiB now (the soft limit; the hard one stays): every commit fails.
        let limit = try runProgram("/usr/bin/prlimit", ["--pid", String(daemon.pid), "--fsize=4096:"])
        #expect(limit.status == 0, "\(limit.stderr)")
        let (full, _) = try Harness.waitFor(daemon, timeout: .seconds(30)) { $0.lastError != nil && $0.pingsPending > 0 }
        #expect(full.lastError?.contains("storage full") == true, "\(full.lastError ?? "")")
        let stuckAt = full.pingsRecorded
        // Still answering, still sampling; nothing lost so far.
        #expect(try daemon.client().call(Methods.agentStatus, NoParams()).gps.pingsPending > 0)

        #expect(try runProgram("/usr/bin/prlimit", ["--pid", String(daemon.pid), "--fsize=unlimited:"]).status == 0)
        let (recovered, _) = try Harness.waitFor(daemon, timeout: .seconds(30)) { $0.lastError == nil && $0.pingsRecorded > stuckAt }
        #expect(recovered.pingsRecorded >= stuckAt + full.pingsPending)
        fake.kill()
        #expect(try daemon.stop() == 0)
    }
}
