import DriverAPI
import Foundation
import JSONRPC
import Testing

/// The daemon's life: its socket file, signals, and systemd's notify and activation protocols.
@Suite("Daemon lifecycle", .ownThread)
struct LifecycleTests {
    @Test("SIGTERM stops the daemon gracefully and removes its socket file")
    func gracefulStop() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.stop(signal: SIGTERM) == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(daemon.log.contains("driverd stopped"))
    }

    @Test("SIGINT stops it too")
    func interrupt() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.stop(signal: SIGINT) == 0)
    }

    @Test("a stale socket file is replaced; a live socket is never stolen")
    func staleAndLiveSockets() throws {
        let first = try DaemonProcess()
        // A second daemon on the same live socket refuses and exits non-zero.
        let second = try DaemonProcess(waitForSocket: false, directory: first.directory)
        #expect(try second.stop(signal: 0, timeout: .seconds(20)) != 0)
        #expect(second.log.contains("refusing"))
        #expect(try first.client().call(Methods.agentDescribe, NoParams()).apiMajor == 1)

        // kill -9 leaves the socket file behind; the next start replaces it.
        try first.stop(signal: SIGKILL)
        #expect(FileManager.default.fileExists(atPath: first.socketPath))
        let third = try DaemonProcess(directory: first.directory)
        #expect(try third.client().call(Methods.agentDescribe, NoParams()).apiMajor == 1)
    }

    @Test("sd_notify: READY=1 once listening, STATUS=, WATCHDOG=1, and STOPPING=1 after SIGTERM")
    func notify() throws {
        let directory = TemporaryDirectory()
        let notifyPath = directory.file("notify.sock")
        let receiver = try DatagramReceiver(path: notifyPath)
        let daemon = try DaemonProcess(
            environment: ["NOTIFY_SOCKET": notifyPath, "WATCHDOG_USEC": "400000"], directory: directory)
        let startup = try receiver.receive(until: { $0.contains("WATCHDOG=1") }, timeout: .seconds(10))
        let ready = try #require(startup.firstIndex { $0.contains("READY=1") })
        #expect(startup[ready].contains("STATUS=gps "))
        // READY=1 means the socket answers.
        #expect(UnixSocketConnector.probe(daemon.socketPath) == .live)
        #expect(startup.last!.contains("WATCHDOG=1"))
        kill(daemon.pid, SIGTERM)
        _ = try receiver.receive(until: { $0.contains("STOPPING=1") }, timeout: .seconds(10))
        #expect(try daemon.stop() == 0)
    }

    @Test("socket activation through systemd-socket-activate")
    func socketActivation() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        try #require(FileManager.default.isExecutableFile(atPath: activate), "systemd-socket-activate is missing")
        let directory = TemporaryDirectory()
        let socketPath = directory.file("activated.sock")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: activate)
        process.arguments = [
            "-l", socketPath, "--fdname=rpc", Binaries.path("driverd"),
            "--socket", socketPath, "--state-dir", directory.file("state"), "--config", directory.file("none.toml"),
            "--log-target", "stderr",
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try waitUntil("the activation socket", timeout: .seconds(10)) { FileManager.default.fileExists(atPath: socketPath) }
        // The first connection makes systemd-socket-activate exec driverd with the listening socket.
        let status = try RPCClient(socketPath: socketPath, timeout: .seconds(20)).call(Methods.agentStatus, NoParams())
        #expect(status.rpc.socketActivated)
        // systemd-socket-activate execs, so the process we started is now driverd; it stops on SIGTERM.
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}

/// A datagram socket standing in for systemd's notify socket.
final class DatagramReceiver {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw TestFailure("bind \(path): \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Collects datagrams until one satisfies `done`.
    func receive(until done: (String) -> Bool, timeout: Duration) throws -> [String] {
        var messages: [String] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { continue }
            let message = String(decoding: buffer[..<count], as: UTF8.self)
            messages.append(message)
            if done(message) { return messages }
        }
        throw TestFailure("no matching notify message within \(timeout); got \(messages)")
    }
}
