import DriverAPI
import Foundation
@testable import GPSKit
import NMEASynth
import Synchronization
import Testing

// Serialized: libgps keeps per-process state, and two readers opening at once in one test process confuse it
// (the daemon has one reader).
@Suite("GPSKit", .serialized)
struct GPSKitTests {
    @Test("a line whose \"class\" is not its first key, or comes twice, is not gpsd's, and never reaches libgps (which loops forever on a value of the wrong type before a \"class\")")
    func classFirstAndOnce() {
        let fix = #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-28T08:00:00.000Z","lat":52.52,"lon":13.40}"#
        #expect(GPSDJSON.fix(Array(fix.utf8))?.latitude == 52.52)
        let quoted = #"{ "class" : "TPV", "device" : "/dev/x\"class\":", "n" : {"class":1} }"#
        #expect(Self.outerKeys(quoted) == ["class", "device", "n"])
        let sky = #"{"class":"SKY","satellites":[{"PRN":1,"used":true}],"hdop":0.9}"#
        #expect(Self.outerKeys(sky) == ["class", "satellites", "hdop"])
        for line in [
            #"{"lon":"x","class":"TPV"}"#, #"{"cls":"","lon":"TPV","den":1915,"class":"TPV"}"#, #"{"cl ass":"x","lon":"x","class":"TPV"}"#,
            #"{"class":"TPV","mode":"x","class":"TPV"}"#, #"{"class":"TPV","device":5,"class":"TPV"}"#,
            #"{"class":"SKY","satellites":[{"PRN":"x"}],"class":"SKY"}"#,
        ] {
            #expect(GPSDJSON.fix(Array(line.utf8)) == nil, "\(line)")
        }
    }

    @Test("a line with a key twice in one object is not gpsd's: the parsed object keeps the last, which hid a nested object from the shape check while libgps looped forever on it")
    func repeatedKey() {
        func repeats(_ line: String) -> Bool { GPSDConnection.hasRepeatedKey(GPSDConnection.keys(Array(line.utf8))) }
        #expect(!repeats(#"{"class":"TPV","a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}"#))
        #expect(!repeats(#"{"class":"TPV","device":"x\"device\":1"}"#))
        for line in [
            #"{"class":"TPV","x":{"class":"TPV"},"x":1}"#, #"{"class":"TPV","lat":1,"lat":2}"#,
            #"{"class":"SKY","satellites":[{"PRN":1,"x":{"class":"TPV"},"x":1}]}"#,
        ] {
            #expect(repeats(line), "\(line)")
            #expect(GPSDJSON.fix(Array(line.utf8)) == nil, "\(line)")
        }
    }

    /// The keys of a line's outer object, as written.
    static func outerKeys(_ line: String) -> [String] {
        GPSDConnection.keys(Array(line.utf8)).filter { $0.object == 0 }.map { String(decoding: $0.name, as: UTF8.self) }
    }

    @Test("endpoints parse HOST:PORT and [V6]:PORT", arguments: [
        ("127.0.0.1:2947", "127.0.0.1", "2947"), ("localhost:1", "localhost", "1"), ("[::1]:2947", "::1", "2947"),
    ])
    func endpoints(text: String, host: String, port: String) throws {
        let endpoint = try #require(GPSDEndpoint(parsing: text))
        #expect(endpoint.host == host && endpoint.port == port)
        #expect(endpoint.description == text)
    }

    @Test("malformed endpoints are refused", arguments: ["", "2947", ":2947", "host:", "host:0", "host:70000", "[::1]2947", "h:x"])
    func badEndpoints(text: String) {
        #expect(GPSDEndpoint(parsing: text) == nil)
    }

    /// The reader's events as a stream, for a test to await (the daemon's handler is the tracking pipeline); a pace
    /// handed in is the next housekeeping's answer.
    final class Streamer: GPSEventHandler {
        let events: AsyncStream<GPSEvent>
        private let continuation: AsyncStream<GPSEvent>.Continuation
        let handedPace = Mutex<GPSPace?>(nil)
        init() { (events, continuation) = AsyncStream.makeStream(of: GPSEvent.self, bufferingPolicy: .bufferingNewest(256)) }
        func handle(_ event: GPSEvent) -> GPSPace {
            continuation.yield(event)
            return .continue
        }
        func idle() -> Double? { nil }
        func housekeeping() -> GPSHousekeeping {
            GPSHousekeeping(pace: handedPace.withLock { pace in defer { pace = nil }; return pace })
        }
    }

    @Test("no gpsd: the reader reports connecting and lost, and keeps retrying")
    func absentGPSD() async throws {
        let streamer = Streamer()
        let reader = GPSDReader(endpoint: GPSDEndpoint(host: "127.0.0.1", port: "1"), handler: streamer, backoff: .init(base: 0.05, cap: 0.1))
        reader.start()
        var states: [GPSLinkState] = []
        for await event in streamer.events {
            if case .link(let state) = event { states.append(state) }
            if states.count >= 6 { break }
        }
        reader.stop()
        #expect(states == [.connecting, .lost, .connecting, .lost, .connecting, .lost])
    }

    /// Records what the reader's thread decides, and on which thread; work from other threads waits in its inbox
    /// (the tracking pipeline's way) and is taken in `housekeeping`.
    final class Recorder: GPSEventHandler, @unchecked Sendable {
        // Touched only on the reader's thread (the test reads it after the reader stopped).
        var entries: [(what: String, thread: pthread_t)] = []
        let inbox = Mutex<[String]>([])
        func handle(_ event: GPSEvent) -> GPSPace {
            if case .link(let state) = event { entries.append(("link \(state.rawValue)", pthread_self())) }
            return .continue
        }
        func idle() -> Double? { nil }
        func housekeeping() -> GPSHousekeeping {
            for item in inbox.withLock({ inbox in defer { inbox.removeAll() }; return inbox }) { entries.append((item, pthread_self())) }
            return GPSHousekeeping()
        }
    }

    @Test("one thread of decisions: work handed in from other threads runs on the reader's thread, in the order it came, between the reader's own events, within its reconnection backoff")
    func performOnTheReadersThread() async throws {
        let recorder = Recorder()
        let reader = GPSDReader(endpoint: GPSDEndpoint(host: "127.0.0.1", port: "1"), handler: recorder, backoff: .init(base: 0.02, cap: 0.05))
        reader.start()
        // Two other threads (as the vehicle's reader would), each handing in its events in its own order.
        let threads = (0..<2).map { lane in
            Thread {
                for index in 0..<50 {
                    recorder.inbox.withLock { $0.append("vehicle \(lane) \(index)") }
                    reader.wake()
                    usleep(useconds_t(200 + lane * 150))
                }
            }
        }
        threads.forEach { $0.start() }
        try await Task.sleep(for: .seconds(1))
        reader.stop()
        try await Task.sleep(for: .milliseconds(200))
        let entries = recorder.entries
        #expect(entries.filter { $0.what.hasPrefix("vehicle") }.count == 100)
        #expect(entries.contains { $0.what.hasPrefix("link") })
        // All on one thread: the reader's (where its link events were handled).
        let readerThread = try #require(entries.first { $0.what.hasPrefix("link") }).thread
        #expect(entries.allSatisfy { pthread_equal($0.thread, readerThread) != 0 })
        for lane in 0..<2 {
            #expect(entries.filter { $0.what.hasPrefix("vehicle \(lane) ") }.map(\.what) == (0..<50).map { "vehicle \(lane) \($0)" })
        }
    }

    /// Says its work is due now at every call (a deadline that never moves, as a commit that keeps failing would give).
    final class AlwaysDue: GPSEventHandler {
        let calls = Atomic<Int>(0)
        func handle(_ event: GPSEvent) -> GPSPace { .continue }
        func idle() -> Double? { 0 }
        func housekeeping() -> GPSHousekeeping {
            calls.add(1, ordering: .relaxed)
            return GPSHousekeeping(dueIn: 0)
        }
    }

    @Test("a handler whose work is always due makes the reader wake at most about 20 times a second, never spin (the one place its waits are combined floors the handler's deadlines)")
    func noSpinOnZeroDeadlines() async throws {
        let handler = AlwaysDue()
        let reader = GPSDReader(endpoint: GPSDEndpoint(host: "127.0.0.1", port: "1"), handler: handler, backoff: .init(base: 0.2, cap: 0.5))
        reader.start()
        try await Task.sleep(for: .seconds(1))
        reader.stop()
        await reader.ended()
        let calls = handler.calls.load(ordering: .relaxed)
        // 20 a second by the floor, and one more per reconnection (2 to 5 a second at this backoff).
        #expect(calls > 5 && calls <= 30, "\(calls) wake-ups in a second")
    }

    /// A real gpsd fed by gpsfake with a synthetic drive, on a random port, while `body` runs.
    static func withGPSFake(_ body: (_ port: Int) async throws -> Void) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/gpsfake"), "gpsfake is missing")
        var template = Array("/tmp/gpskit-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try NMEAWriter.log(RoutePresets.driving(laps: 3)).write(toFile: directory + "/drive.nmea", atomically: true, encoding: .utf8)
        // Below Linux's ephemeral range (32768 to 60999): a port the kernel hands to any client or `bind(0)` of the
        // suites beside (the power-cut soak's daemons and backends) can never be this one. Inside it, gpsfake once
        // found its port taken, and the reader heard no fix in 30 s.
        let port = Int.random(in: 20000...32000)
        let fake = Process()
        fake.executableURL = URL(fileURLWithPath: "/usr/bin/gpsfake")
        fake.arguments = ["-1", "-q", "-n", "-P", String(port), "-c", "0.02", directory + "/drive.nmea"]
        fake.environment = ["TMPDIR": directory, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        fake.standardOutput = FileHandle.nullDevice
        fake.standardError = FileHandle.nullDevice
        try fake.run()
        defer {
            kill(fake.processIdentifier, SIGKILL)
            fake.waitUntilExit()
            _ = try? Process.run(URL(fileURLWithPath: "/usr/bin/pkill"), arguments: ["-9", "-f", "gpsd .*-S \(port)"])
        }
        try await body(port)
    }

    /// Pauses the reader at the first fix, with work of its own schedule due half a second later (a held ping's
    /// window): notes when `housekeeping` first runs once that work is due. (`idle` is for waits for data only.)
    final class PausingHandler: GPSEventHandler, @unchecked Sendable {
        static let pause = 3.0, dueAfter = 0.5
        private let lock = NSLock()
        private var due: Double?
        private var doneAt: Double?

        private func locked<T>(_ body: () -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body()
        }

        func handle(_ event: GPSEvent) -> GPSPace {
            guard case .fix = event else { return .continue }
            return locked {
                guard due == nil else { return .continue }
                due = GPSDReader.monotonicNow() + Self.dueAfter
                return .pause(seconds: Self.pause, release: false)
            }
        }

        func idle() -> Double? { nil }

        func housekeeping() -> GPSHousekeeping {
            let now = GPSDReader.monotonicNow()
            return GPSHousekeeping(dueIn: locked {
                guard let due, doneAt == nil else { return nil }
                guard now >= due else { return due - now }
                doneAt = now
                return nil
            })
        }

        /// Seconds from the work's deadline to the `housekeeping` call that did it (nil: not yet).
        var lateness: Double? { locked { doneAt.flatMap { done in due.map { done - $0 } } } }
    }

    @Test("work due on its own schedule during a pause (pings held past the last moving sample) is done at its deadline, not when the pause ends")
    func deadlineDuringPause() async throws {
        try await Self.withGPSFake { port in
            let handler = PausingHandler()
            let reader = GPSDReader(endpoint: GPSDEndpoint(host: "127.0.0.1", port: String(port)), handler: handler, backoff: .init(base: 0.2, cap: 0.5))
            reader.start()
            defer { reader.stop() }
            let deadline = ContinuousClock.now + .seconds(30)
            while handler.lateness == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            let lateness = try #require(handler.lateness, "the due work was never done")
            // Within a second of its deadline on a loaded machine; the pause alone would make it 2.5 s late.
            #expect(lateness < 1.0, "done \(lateness) s after its deadline, in a \(PausingHandler.pause)-s pause")
        }
    }

    @Test("a real gpsd (gpsfake) gives fixes with time, position, speed and track; pausing stops them")
    func realGPSD() async throws {
        try await Self.withGPSFake { port in try await Self.fixesAndPause(port: port) }
    }

    static func fixesAndPause(port: Int) async throws {
        let streamer = Streamer()
        let reader = GPSDReader(endpoint: GPSDEndpoint(host: "127.0.0.1", port: String(port)), handler: streamer, backoff: .init(base: 0.2, cap: 0.5))
        reader.start()
        defer { reader.stop() }
        var fixes: [Fix] = []
        var connected = false
        for await event in streamer.events {
            switch event {
            case .link(.connected): connected = true
            case .fix(let fix): fixes.append(fix)
            default: break
            }
            if fixes.count >= 20 { break }
        }
        #expect(connected)
        let moving = fixes.filter { ($0.speed ?? 0) > 5 }
        #expect(moving.count >= 10)
        #expect(moving.allSatisfy { $0.track != nil && $0.latitude > 52.5 && $0.latitude < 52.53 && $0.time > 1_795_000_000 })
        #expect(fixes.map(\.time) == fixes.map(\.time).sorted())
        // Paused, gpsd goes quiet: nothing arrives for the pause.
        streamer.handedPace.withLock { $0 = .pause(seconds: 2, release: false) }
        reader.wake()
        try await Task.sleep(for: .milliseconds(200))
        let quietStart = ContinuousClock.now
        var afterPause: ContinuousClock.Instant? = nil
        for await event in streamer.events {
            if case .fix = event, ContinuousClock.now - quietStart > .milliseconds(100) {
                afterPause = .now
                break
            }
        }
        let quiet = try #require(afterPause) - quietStart
        #expect(quiet > .milliseconds(1500), "a fix arrived \(quiet) into a 2 s pause")
    }
}
