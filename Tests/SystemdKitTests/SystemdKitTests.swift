import Foundation
import SystemdKit
import Testing

/// libsystemd through the wrapper, against a real datagram socket standing in for systemd.
@Suite("SystemdKit", .serialized)
struct SystemdKitTests {
    final class Receiver {
        let fd: Int32
        let path: String

        init() throws {
            path = "/tmp/sdk-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
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
            try #require(result == 0)
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        func next() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }

        deinit {
            close(fd)
            unlink(path)
        }
    }

    @Test("notify sends the states in one datagram; a newline in STATUS cannot inject another assignment")
    func notify() throws {
        let receiver = try Receiver()
        setenv("NOTIFY_SOCKET", receiver.path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        let notifier = ServiceNotifier()
        #expect(notifier.isSupervised)
        #expect(try notifier.notify(.ready, .status("all good\nREADY=0")))
        #expect(receiver.next() == "READY=1\nSTATUS=all good READY=0")
        try notifier.notify(.stopping)
        #expect(receiver.next() == "STOPPING=1")
    }

    @Test("without NOTIFY_SOCKET notify does nothing")
    func unsupervised() throws {
        unsetenv("NOTIFY_SOCKET")
        #expect(!ServiceNotifier().isSupervised)
        #expect(try ServiceNotifier().notify(.ready) == false)
    }

    @Test("the watchdog interval comes from WATCHDOG_USEC")
    func watchdog() throws {
        setenv("WATCHDOG_USEC", "3000000", 1)
        defer { unsetenv("WATCHDOG_USEC") }
        #expect(try ServiceNotifier().watchdogInterval() == .seconds(3))
        unsetenv("WATCHDOG_USEC")
        #expect(try ServiceNotifier().watchdogInterval() == nil)
    }

    @Test("a malformed WATCHDOG_USEC becomes a typed error")
    func watchdogError() {
        setenv("WATCHDOG_USEC", "soon", 1)
        defer { unsetenv("WATCHDOG_USEC") }
        #expect(throws: SystemdError.self) { try ServiceNotifier().watchdogInterval() }
    }

    @Test("no LISTEN_FDS means no activation sockets")
    func noActivation() throws {
        unsetenv("LISTEN_FDS")
        #expect(try SocketActivation.takeListeningSockets().isEmpty)
    }
}
