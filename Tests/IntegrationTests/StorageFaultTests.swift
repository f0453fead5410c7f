import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import NMEASynth
import SQLiteKit
import Testing

/// The disk itself as bad input, through the real daemon on real file systems (root: mounts): a size-limited tmpfs
/// filled to the last byte, and ext4 on a loop device mounted `errors=remount-ro` with a real file-system error
/// raised. What must hold: changes refused with `notSaved` and the reason, the pings still reaching the backend, no
/// core spun, the fault named in `agent.status` and `driverctl status`, and recovery without loss or doubling.
@Suite("Storage faults", .ownThread, .enabled(if: geteuid() == 0, "mounting a tmpfs and a loop device needs root"))
struct StorageFaultTests {
    /// A van on the move, in real time from now, on gpsd; a backend with the built-in world; driverd with its state
    /// directory on the file system `mount` puts there.
    struct Rig {
        let sim: SimProcess
        let http: SimHTTP
        let fake: GPSFake
        let directory: TemporaryDirectory
        let state: String
        var daemon: DaemonProcess
        let config: String

        init(mount: (String) throws -> Void) throws {
            directory = TemporaryDirectory("driverd-storage")
            state = directory.file("state")
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            try mount(state)
            sim = try SimProcess()
            http = SimHTTP(base: sim.base)
            let corners: [SyntheticRoute.Point] = [.init(lat: 52.520, lon: 13.405), .init(lat: 52.5245, lon: 13.405), .init(lat: 52.5245, lon: 13.4124)]
            let legs = (0..<12).flatMap { _ in corners.reversed().map { SyntheticRoute.Leg.drive(to: $0, speed: 10) } }
            let route = SyntheticRoute(start: corners[0], startTime: Date().timeIntervalSince1970.rounded(), legs: legs, noise: 2, seed: 7)
            fake = try GPSFake(log: try Harness.synthesise(route, directory, "drive.nmea"), delay: 1.0 / 3)
            // Accepting and arriving need no stop (the safety gate holds only what needs the driver's attention).
            config = Harness.config(backend: sim)
            daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: config, directory: directory)
            let daemon = daemon, http = http
            try waitUntil("the route synced", timeout: .seconds(60), detail: daemon.log) {
                try daemon.client().call(Methods.routeGet, NoParams()).stops.count == 4
            }
            try waitUntil("moving, and pings at the backend", timeout: .seconds(90), detail: daemon.log) {
                let gps = try daemon.client().call(Methods.gpsStatus, NoParams())
                let atBackend = try http.requestBlocking(.GET, "/sim/drivers/drv-1/locations").decode(DriverLocations.self)
                return gps.motion == .moving && gps.pingsRecorded > 5 && !atBackend.pings.isEmpty
            }
        }

        func status() throws -> AgentStatus { try daemon.client().call(Methods.agentStatus, NoParams()) }

        /// The error of a driver's action, nil when it succeeded.
        func act(_ method: Method<TaskParams, TaskView>, _ task: String) -> APIError? {
            do {
                _ = try daemon.client(timeout: .seconds(30)).call(method, TaskParams(taskId: task))
                return nil
            } catch let RPCClient.Failure.server(error) {
                return error
            } catch {
                Issue.record("\(method.name): \(error)")
                return nil
            }
        }

        /// The newest fix time the backend has from this van.
        /// When the backend took the unit's last batch (its own clock: a fix's stamp lags under load) and the pings it
        /// holds so far.
        func atBackend() async throws -> (lastBatch: Double, pings: Int) {
            let locations = try await http.locations()
            return (locations.lastReportAt ?? 0, locations.pings.count)
        }

        /// CPU seconds (user and system) the daemon used so far.
        func cpuSeconds() throws -> Double {
            let stat = try String(contentsOfFile: "/proc/\(daemon.pid)/stat", encoding: .utf8)
            let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
            return (Double(fields[11])! + Double(fields[12])!) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        /// Share of a core over `seconds` of wall time.
        func cpuShare(over seconds: Double) throws -> Double {
            let before = try cpuSeconds(), start = Date()
            Thread.sleep(forTimeInterval: seconds)
            return (try cpuSeconds() - before) / Date().timeIntervalSince(start)
        }

        func ctlStatus() throws -> String {
            let outcome = try runProgram(Binaries.path("driverctl"), ["status"], environment: ["DRIVERD_SOCKET": daemon.socketPath])
            return outcome.stdout
        }

        func stats() async throws -> SimStats { try await http.request(.GET, "/sim/stats").decode(SimStats.self) }
    }

    static func mount(_ arguments: [String]) throws {
        let outcome = try runProgram("/usr/bin/mount", arguments)
        guard outcome.status == 0 else { throw TestFailure("mount \(arguments): \(outcome.stderr)") }
    }

    static func unmount(_ path: String) {
        _ = try? runProgram("/usr/bin/umount", ["-l", path])
    }

    /// Fills the file system under `directory` to its last byte: large writes, then single bytes.
    static func fill(_ directory: String, name: String = "filler") {
        let fd = open(directory + "/" + name, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        for size in [1 << 20, 1 << 12, 1] {
            let chunk = [UInt8](repeating: 0x5A, count: size)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) == size {}
        }
        fsync(fd)
    }

    @Test("a full tmpfs: the reserve saves the first change, the next is refused (1008, full), pings still reach the backend, no spin; freed, it takes up writing with nothing lost or doubled")
    func fullTmpfs() async throws {
        var rig = try Rig { try Self.mount(["-t", "tmpfs", "-o", "size=24m", "tmpfs", $0]) }
        defer { Self.unmount(rig.state) }
        #expect(rig.act(Methods.taskAccept, "task-1001") == nil)
        #expect(try rig.status().store?.condition == .ok)

        // Another program fills the disk. The driver's next change finds it full: the reserve is given up, it is saved.
        Self.fill(rig.state)
        #expect(rig.act(Methods.taskArrive, "task-1001") == nil, "saved from the reserve\n\(rig.daemon.log.suffix(3000))")
        let afterReserve = try #require(try rig.status().store)
        #expect(afterReserve.reserveInUse, "\(afterReserve)")
        // It keeps filling: now nothing can be saved, and the refusal says so.
        Self.fill(rig.state, name: "filler-2")
        let refused = try #require(rig.act(Methods.taskAccept, "task-1002"), "a change on a full disk must be refused")
        #expect(refused.kind == .notSaved && refused.kind.wireCode == 1008, "\(refused)")
        #expect(refused.data?["reason"] == .string("full") && refused.data?["freeBytes"] != nil, "\(String(describing: refused.data))")
        #expect(!refused.message.contains("retr"), "\(refused.message)")
        let store = try #require(try rig.status().store)
        #expect(store.condition == .full, "\(store)")
        let status = try rig.ctlStatus()
        #expect(status.contains("store     full"), "\(status)")

        // What needs no disk keeps going: the backend's newest ping stays within two batch intervals of real time.
        let fullSince = Date().timeIntervalSince1970, before = try await rig.atBackend()
        try await Task.sleep(for: .seconds(12))
        let after = try await rig.atBackend()
        #expect(after.lastBatch >= fullSince && after.pings > before.pings,
                "no ping reached the backend in 12 s of a full disk (\(before) then \(after), full since \(fullSince))")
        let share = try rig.cpuShare(over: 20)
        print("storage-fault: driverd's CPU with a full store (debug build): \(String(format: "%.1f", share * 100)) % of a core over 20 s")
        #expect(share < 0.3, "driverd spins with a full store: \(share * 100) % of a core")
        #expect(rig.daemon.process.isRunning)

        // Space returns: the refused change is done again and saved; everything drains once.
        try FileManager.default.removeItem(atPath: rig.state + "/filler-2")
        try FileManager.default.removeItem(atPath: rig.state + "/filler")
        try waitUntil("the store writable again", timeout: .seconds(45), detail: rig.daemon.log) { try rig.status().store?.condition == .ok }
        #expect(rig.act(Methods.taskAccept, "task-1002") == nil)
        let drained = try Harness.drain(rig.daemon)
        #expect(drained.items == 0 && drained.deadLetters == 0, "\(drained)")
        let stats = try await rig.stats()
        #expect(stats.statusUpdates.filter { $0.taskId == "task-1001" }.map(\.status) == [.accepted, .arrivedAtStore])
        #expect(stats.statusUpdates.filter { $0.taskId == "task-1002" }.map(\.status) == [.accepted])
        #expect(try rig.status().store?.reserveInUse == false, "the reserve made again once there is room")
        // Pings: every one the daemon kept is at the backend once (the backend keeps unique pings by time).
        let kept = try rig.daemon.client().call(Methods.gpsStatus, NoParams()).pingsRecorded
        let atBackend = try await rig.http.locations().pings.count
        #expect(atBackend >= kept - 2, "kept \(kept), at the backend \(atBackend)")
        let pid = rig.daemon.pid
        #expect(try rig.daemon.stop() == 0)
        #expect(try readStateDatabase(rig.state) { try $0.value(String.self, sql: "PRAGMA integrity_check") } == "ok")
        rig.fake.kill()
        _ = pid
    }

    @Test("ext4 remounted read-only by a real error: refused (1008, read-only), pings still go, no spin, status names it; after fsck and a new start everything saved is there and sent once")
    func readOnlyExt4() async throws {
        let image = TemporaryDirectory("driverd-ext4")
        let file = image.file("card.img")
        #expect(try runProgram("/usr/bin/truncate", ["-s", "64M", file]).status == 0)
        #expect(try runProgram("/usr/sbin/mkfs.ext4", ["-q", "-F", "-m", "0", file]).status == 0)
        let loop = try runProgram("/usr/sbin/losetup", ["--find", "--show", file])
        try #require(loop.status == 0, "losetup: \(loop.stderr)")
        let device = loop.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? runProgram("/usr/sbin/losetup", ["-d", device]) }
        let trigger = "/sys/fs/ext4/\((device as NSString).lastPathComponent)/trigger_fs_error"
        var rig = try Rig { try Self.mount(["-o", "errors=remount-ro", device, $0]) }
        defer { Self.unmount(rig.state) }
        try #require(FileManager.default.fileExists(atPath: trigger), "this kernel has no \(trigger)")
        #expect(rig.act(Methods.taskAccept, "task-1001") == nil)
        _ = try Harness.drain(rig.daemon)

        // A real file-system error: the kernel aborts the journal and remounts read-only.
        try "1\n".write(toFile: trigger, atomically: false, encoding: .utf8)
        try waitUntil("the store read-only", timeout: .seconds(20), detail: rig.daemon.log) { try rig.status().store?.condition == .readOnly }
        let refused = try #require(rig.act(Methods.taskArrive, "task-1001"), "a change on a read-only store must be refused")
        #expect(refused.kind == .notSaved && refused.data?["reason"] == .string("read-only"), "\(refused)")
        let status = try rig.ctlStatus()
        #expect(status.contains("store     read-only"), "\(status)")
        let since = Date().timeIntervalSince1970, before = try await rig.atBackend()
        try await Task.sleep(for: .seconds(12))
        let after = try await rig.atBackend()
        #expect(after.lastBatch >= since && after.pings > before.pings, "pings must reach the backend from memory: \(before) then \(after)")
        let share = try rig.cpuShare(over: 20)
        print("storage-fault: driverd's CPU with a read-only store (debug build): \(String(format: "%.1f", share * 100)) % of a core over 20 s")
        #expect(share < 0.3, "driverd spins with a read-only store: \(share * 100) % of a core")

        // The operator's mend: stop driverd, fsck, mount again, start it (systemd would restart it).
        #expect(try rig.daemon.stop() == 0, "a graceful stop on a read-only store")
        Self.unmount(rig.state)
        let fsck = try runProgram("/usr/sbin/e2fsck", ["-fy", device])
        #expect(fsck.status <= 1, "e2fsck: \(fsck.stdout) \(fsck.stderr)")
        try Self.mount(["-o", "errors=remount-ro", device, rig.state])
        rig.daemon = try DaemonProcess(arguments: ["--gpsd", rig.fake.endpoint], config: rig.config, directory: rig.directory)
        #expect(try rig.status().store?.condition == .ok)
        #expect(rig.act(Methods.taskArrive, "task-1001") == nil)
        let drained = try Harness.drain(rig.daemon)
        #expect(drained.items == 0 && drained.deadLetters == 0, "\(drained)")
        let stats = try await rig.stats()
        #expect(stats.statusUpdates.filter { $0.taskId == "task-1001" }.map(\.status) == [.accepted, .arrivedAtStore])
        #expect(try rig.daemon.stop() == 0)
        #expect(try readStateDatabase(rig.state) { try $0.value(String.self, sql: "PRAGMA integrity_check") } == "ok")
        rig.fake.kill()
    }
}
