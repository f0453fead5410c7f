import Foundation
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
    init(log: String, delay: Double, port: Int? = nil, loop: Bool = false) throws {
        try #require(Self.available, "gpsfake is missing (Debian package gpsd-clients)")
        self.port = port ?? Self.freePort()
        directory = TemporaryDirectory("gpsfake")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gpsfake")
        process.arguments = (loop ? [] : ["-1"]) + ["-q", "-n", "-P", String(self.port), "-c", String(delay), log]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory.path
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitForPort()
    }

    var endpoint: String { "127.0.0.1:\(port)" }

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
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
