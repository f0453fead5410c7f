import DriverAPI
import Foundation
import NMEASynth
import Synchronization
import Testing

/// A real gpsd fed by gpsfake, on a free loopback port.
final class GPSFake {
    let port: Int
    let process = Process()
    private let directory: TemporaryDirectory

    static let available = FileManager.default.isExecutableFile(atPath: "/usr/bin/gpsfake")

    /// The shared receiver logs, or nil when `../shared` is not beside the checkout.
    static func sharedLog(_ name: String) -> String? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("shared/testdata/nmea/\(name)").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// Starts gpsfake replaying `log` once. `delay` is gpsfake's pause per sentence (0.5 is real time for
    /// two sentences per epoch); `port` reuses a port (a restarted gpsd).
    ///
    /// `leadIn`: that long of text sentences (`$GPTXT`, no fix) before the log, and the replay **held** once gpsd
    /// listens, until `play()`. gpsd, started with `-n`, replays at once, while driverd, started after it, may take
    /// seconds to connect on a loaded machine: a test that counts the log's fixes (pings per mode, spikes rejected, an
    /// 8-h backlog) missed its first seconds. The lead-in covers what is fed before the hold and while driverd's watch
    /// request reaches gpsd.
    init(log: String, delay: Double, port: Int? = nil, loop: Bool = false, leadIn: Duration? = nil) throws {
        try #require(Self.available, "gpsfake is missing (Debian package gpsd-clients)")
        self.port = port ?? Self.freePort()
        directory = TemporaryDirectory("gpsfake")
        var replayed = log
        if let leadIn {
            replayed = directory.file("lead-in+" + URL(fileURLWithPath: log).lastPathComponent)
            let lines = Int((leadIn / .seconds(1)) / delay)
            let text = String(repeating: Self.leadInSentence + "\r\n", count: lines) + (try String(contentsOfFile: log, encoding: .isoLatin1))
            try text.write(toFile: replayed, atomically: true, encoding: .isoLatin1)
        }
        if !loop {
            let lines = try String(contentsOfFile: replayed, encoding: .isoLatin1).split(whereSeparator: \.isNewline).count
            replaySeconds = Double(lines) * delay
            lastFixTime = try NMEALog.fixes(log).last?.time
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gpsfake")
        process.arguments = (loop ? [] : ["-1"]) + ["-q", "-n", "-P", String(self.port), "-c", String(delay), replayed]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory.path
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitForPort()
        // gpsfake paces the replay; stopped, it feeds nothing, and its gpsd (a process of its own) keeps serving.
        if leadIn != nil { Glibc.kill(process.processIdentifier, SIGSTOP) } else { replayStarted = .now }
    }

    /// Lets a held replay go on (see `Harness.play(_:to:)`).
    func play() {
        Glibc.kill(process.processIdentifier, SIGCONT)
        replayStarted = .now
    }

    /// The replay's length at gpsfake's pace and the time of the log's last fix (nil when looped), and when the
    /// replay began (nil while held).
    private var replaySeconds: Double?
    private var lastFixTime: Double?
    private var replayStarted: ContinuousClock.Instant?

    /// Whether driverd has had the whole of a replay played once: its newest fix is the log's last (within 5 s: gpsd
    /// may merge the last epochs), for a log whose fixes `NMEALog` reads; else the replay has had the time its pace
    /// takes. gpsfake gives no sign of the end while a client is connected, and a quiet spell alone misleads: on a
    /// loaded machine (12 integration tests beside the unit suite and a browser) gpsfake runs behind its pace, and a
    /// pause of 3 s in the fixes mid-log was taken for the end (docs/LEAN.md, "replays that end too soon").
    func played(to status: GPSStatus) -> Bool {
        guard let replaySeconds else { return true }
        guard let replayStarted, ContinuousClock.now - replayStarted >= .seconds(replaySeconds) else { return false }
        guard let lastFixTime else { return true }
        return (status.lastFix?.time ?? 0) >= lastFixTime - 5
    }

    var endpoint: String { "127.0.0.1:\(port)" }

    /// A receiver's text message (no position).
    static let leadInSentence = NMEAWriter.sentence("GPTXT,01,01,02,lead-in")

    private func waitForPort() throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if Self.canConnect(port) { return }
            usleep(50_000)
        }
        throw TestFailure("gpsd did not listen on \(port)")
    }

    /// Kills gpsfake and the gpsd it started (SIGKILL: gpsfake can spin on SIGTERM after a log ends).
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // gpsfake's gpsd runs as its own process; find it by its port argument.
        _ = try? runProgram("/usr/bin/pkill", ["-9", "-f", "gpsd .*-S \(port)"])
        let deadline = ContinuousClock.now + .seconds(10)
        while Self.canConnect(port) && ContinuousClock.now < deadline { usleep(50_000) }
    }

    deinit { kill() }

    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A port nothing listens on now (bound and released by the kernel's choice).
    /// A loopback port for a listener started later (gpsd, a proxy), from below the kernel's ephemeral range.
    ///
    /// Why not port 0's pick: that comes from the ephemeral range, from which the kernel also picks the source port
    /// of every outgoing connection. Between this call and the listener's bind (minutes, in some tests) such a
    /// connection could hold it, and driverd, connecting to it meanwhile, could connect to itself (TCP's simultaneous
    /// open): a loaded run once showed "gps link: connected, but no usable fix" and no arrival. The kiosk's tests
    /// (Tests/kiosk/stack.py) take the 6,000 ports just under the range; these are the 6,000 below those.
    static func freePort() -> Int {
        nextPort.withLock { next in
            for _ in 0..<portBlock.count {
                let port = next
                next = port + 1 < portBlock.upperBound ? port + 1 : portBlock.lowerBound
                if canBind(port) { return port }
            }
            fatalError("no free loopback port in \(portBlock)")
        }
    }

    private static let portBlock: Range<Int> = {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""  // absent: Linux's default
        let ephemeralLow = range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        return (ephemeralLow - 12_000)..<(ephemeralLow - 6_000)
    }()

    /// A random start, so runs close together do not reuse each other's ports while they linger in TIME_WAIT.
    private static let nextPort = Mutex(Int.random(in: portBlock))

    private static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
