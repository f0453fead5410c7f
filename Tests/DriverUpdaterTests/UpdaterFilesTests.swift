@testable import DriverUpdater
import Foundation
import Testing

/// driverd-update runs as root on files driverd (unprivileged) wrote: it must not follow a link driverd put
/// there, and what it installs must be exactly what it hashed.
@Suite("driverd-update: reading what driverd wrote")
struct UpdaterFilesTests {
    static func directory() -> String {
        let path = NSTemporaryDirectory() + "updater-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a request or a package that is a link (to /etc/shadow, say) is refused, not read")
    func noFollow() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "secret".write(toFile: directory + "/target", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/request.json", withDestinationPath: directory + "/target")
        #expect(throws: UpdaterError.self) { try Updater.readNoFollow(directory + "/request.json", limit: 1024) }
        #expect(throws: UpdaterError.self) { try Updater.copyNoFollow(directory + "/request.json", to: directory + "/copy") }
        #expect(try Updater.readNoFollow(directory + "/target", limit: 1024) == Data("secret".utf8))
    }

    @Test("the copy is hashed as it is written: its size and SHA-256 are the file's")
    func copyHashes() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bytes = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 97) })
        try bytes.write(to: URL(fileURLWithPath: directory + "/package.deb"))
        let copied = try Updater.copyNoFollow(directory + "/package.deb", to: directory + "/kept.deb")
        #expect(copied.size == bytes.count)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/kept.deb")) == bytes)
        // sha256sum of the same bytes, computed by the system's tool.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [directory + "/package.deb"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let expected = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64)
        #expect(copied.sha256 == String(expected))
    }

    @Test("a journal that cannot be read stops the run with the reason: no request is taken over an install whose outcome is unknown")
    func unreadableJournal() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "{\"phase\":\"judg".write(toFile: directory + "/journal.json", atomically: true, encoding: .utf8)
        try "{}".write(toFile: directory + "/request.json", atomically: true, encoding: .utf8)
        var said: [String] = []
        let updater = Updater(
            settings: .init(publicKey: "", healthySeconds: 1, socketPath: directory + "/none.sock", requestDirectory: directory, stateDirectory: directory),
            say: { said.append($0) })
        #expect {
            try updater.run()
        } throws: { error in
            "\(error)".contains("journal.json cannot be read")
        }
        #expect(said.isEmpty, "\(said)")
        #expect(FileManager.default.fileExists(atPath: directory + "/request.json"))
    }

    @Test("a conffile's MD5 as dpkg records it")
    func conffileMD5() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "url = \"\"\n".write(toFile: directory + "/driverd.toml", atomically: true, encoding: .utf8)
        // md5sum of `url = ""\n`.
        #expect(try Repack.md5(of: directory + "/driverd.toml") == "db426ba35fd493e11d6180e54a9d5eb5")
        #expect(try Repack.md5(of: directory + "/missing") == nil)
        #expect(throws: UpdaterError.self) { try Repack.md5(of: directory + "/driverd.toml/under") }
    }
}
