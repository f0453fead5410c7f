import Foundation
import Testing

/// Structured journald entries, read back with journalctl.
@Suite("journald logging", .ownThread)
struct JournalTests {
    @Test("the start-up entry carries its MESSAGE_ID and DRIVERD_ fields")
    func structuredEntry() throws {
        let journald = "/lib/systemd/systemd-journald"
        let socketPath = "/run/systemd/journal/socket"
        var started: Process? = nil
        if !Self.isListening(socketPath) {
            guard getuid() == 0, FileManager.default.isExecutableFile(atPath: journald) else {
                print("skipped: no journald socket, and journald cannot be started here (needs root and \(journald))")
                return
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: journald)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            started = process
            try? waitUntil("journald listening", timeout: .seconds(10)) { Self.isListening(socketPath) }
        }
        defer {
            if let started {
                started.terminate()
                started.waitUntilExit()
            }
        }
        let daemon = try DaemonProcess(arguments: ["--log-target", "journal"])
        try daemon.stop()
        let startedID = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f70"
        var matched: [String: Any]? = nil
        try? waitUntil("the journal entry", timeout: .seconds(10)) {
            let output = try runProgram("/usr/bin/journalctl", ["-o", "json", "--no-pager", "MESSAGE_ID=\(startedID)", "DRIVERD_SOCKET=\(daemon.socketPath)"])
            matched = output.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.first
            return matched != nil
        }
        let entry = try #require(matched, "no journal entry with MESSAGE_ID=\(startedID)")
        #expect(entry["PRIORITY"] as? String == "6")
        #expect(entry["SYSLOG_IDENTIFIER"] as? String == "driverd")
        #expect((entry["MESSAGE"] as? String)?.contains("starting") == true)
        #expect(entry["DRIVERD_STATE_DIR"] as? String == daemon.directory.file("state"))
    }

    /// A leftover socket file from a journald that has exited refuses datagram connections.
    static func isListening(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }
}
