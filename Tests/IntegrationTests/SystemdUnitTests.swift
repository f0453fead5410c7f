import Foundation
import Testing

/// The unit files pass systemd's own checker.
@Suite("systemd units", .ownThread)
struct SystemdUnitTests {
    static let systemdDirectory: URL = {
        // Tests/IntegrationTests/SystemdUnitTests.swift -> repository root
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd")
    }()

    @Test("systemd-analyze verify accepts driverd.service and driverd.socket")
    func verify() throws {
        let analyze = "/usr/bin/systemd-analyze"
        try #require(FileManager.default.isExecutableFile(atPath: analyze), "systemd-analyze is missing")
        // Verify copies whose ExecStart points at the binary just built, as the package would install it.
        let directory = TemporaryDirectory()
        for name in ["driverd.service", "driverd.socket"] {
            var text = try String(contentsOf: Self.systemdDirectory.appendingPathComponent(name), encoding: .utf8)
            text = text.replacingOccurrences(of: "/usr/bin/driverd", with: Binaries.path("driverd"))
            try text.write(toFile: directory.file(name), atomically: true, encoding: .utf8)
        }
        let outcome = try runProgram(analyze, ["verify", "--man=no", directory.file("driverd.service"), directory.file("driverd.socket")])
        let complaints = (outcome.stdout + outcome.stderr).split(separator: "\n").filter {
            // Without systemd as PID 1 some generic notes appear; anything naming our units is a real finding.
            $0.contains("driverd")
        }
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        #expect(complaints.isEmpty, "\(complaints.joined(separator: "\n"))")
    }

    @Test("sysusers and tmpfiles declarations parse")
    func sysusersAndTmpfiles() throws {
        let sysusers = try String(contentsOf: Self.systemdDirectory.appendingPathComponent("driverd.sysusers"), encoding: .utf8)
        #expect(sysusers.contains("u driverd"))
        #expect(sysusers.contains("g driver"))
        let tool = "/usr/bin/systemd-sysusers"
        if FileManager.default.isExecutableFile(atPath: tool) {
            // Apply it to an empty root: the user, the group and the membership must appear.
            let root = TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: root.file("etc"), withIntermediateDirectories: true)
            for name in ["passwd", "group", "shadow", "gshadow"] {
                _ = FileManager.default.createFile(atPath: root.file("etc/\(name)"), contents: nil)
            }
            let outcome = try runProgram(tool, ["--root", root.path, "-"], stdin: sysusers)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let passwd = try String(contentsOfFile: root.file("etc/passwd"), encoding: .utf8)
            let groups = try String(contentsOfFile: root.file("etc/group"), encoding: .utf8)
            #expect(passwd.contains("driverd:x:"))
            #expect(groups.split(separator: "\n").contains { $0.hasPrefix("driver:x:") && $0.hasSuffix(":driverd") })
        }
        let tmpfiles = "/usr/bin/systemd-tmpfiles"
        if FileManager.default.isExecutableFile(atPath: tmpfiles) {
            let outcome = try runProgram(tmpfiles, ["--dry-run", "--create", Self.systemdDirectory.appendingPathComponent("driverd.tmpfiles").path])
            #expect(!outcome.stderr.contains("Failed to parse"), "\(outcome.stderr)")
        }
    }

    @Test("the service scores at most 2.0 (OK) in systemd-analyze security --offline=yes")
    func exposure() throws {
        let analyze = "/usr/bin/systemd-analyze"
        try #require(FileManager.default.isExecutableFile(atPath: analyze), "systemd-analyze is missing")
        let unit = Self.systemdDirectory.appendingPathComponent("driverd.service").path
        let outcome = try runProgram(analyze, ["security", "--offline=yes", "--no-pager", unit])
        let line = try #require(
            outcome.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") },
            "no score in: \(outcome.stdout)\(outcome.stderr)")
        // "→ Overall exposure level for driverd.service: 1.4 OK 🙂"
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        #expect(score <= 2.0, "\(line)")
    }

    @Test("journalctl accepts the message catalog and lists every entry")
    func catalog() throws {
        let journalctl = "/usr/bin/journalctl"
        try #require(FileManager.default.isExecutableFile(atPath: journalctl), "journalctl is missing")
        let root = TemporaryDirectory()
        let catalogDirectory = root.file("usr/lib/systemd/catalog")
        try FileManager.default.createDirectory(atPath: catalogDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.file("var/lib/systemd/catalog"), withIntermediateDirectories: true)
        let source = Self.systemdDirectory.deletingLastPathComponent().appendingPathComponent("packaging/driverd.catalog").path
        try FileManager.default.copyItem(atPath: source, toPath: catalogDirectory + "/driverd.catalog")
        let update = try runProgram(journalctl, ["--root", root.path, "--update-catalog"])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(!update.stderr.contains("driverd.catalog"), "journalctl complained: \(update.stderr)")
        let listed = try runProgram(journalctl, ["--root", root.path, "--list-catalog", "--no-pager"])
        let ids = Set(listed.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        let catalogText = try String(contentsOfFile: source, encoding: .utf8)
        let expected = Set(catalogText.split(separator: "\n").filter { $0.hasPrefix("-- ") }.map { String($0.dropFirst(3)) })
        #expect(expected.count == 26, "MessageCatalogTests pins the set; this pins that the file parsed whole")
        #expect(expected.isSubset(of: ids), "missing: \(expected.subtracting(ids))")
    }
}
