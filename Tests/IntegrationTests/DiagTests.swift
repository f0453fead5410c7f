import DriverAPI
import Foundation
import Testing

/// `driverctl diag` against a real daemon whose backend is unreachable and whose config has a typo and a password.
@Suite("driverctl diag", .ownThread)
struct DiagTests {
    let ctl = Binaries.path("driverctl")
    static let secret = "s3cret-pass-7781"

    @Test("one screen, the same as JSON, and a bundle with the config redacted")
    func diag() throws {
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:9"], config: """
            [backend]
            url = "http://127.0.0.1:9"
            username = "unit-7"
            password = "\(Self.secret)"
            [sampling]
            movinghz = 2
            """)
        let socket = ["--socket", daemon.socketPath]

        // Port 9 refuses connections: a flush attempt leaves the link's error behind.
        _ = try runProgram(ctl, socket + ["sync"])
        var report: DiagReport?
        // A few seconds of gpsd retries, too.
        try? waitUntil("the link's error and some uptime", timeout: .seconds(30)) {
            let outcome = try runProgram(ctl, socket + ["--json", "diag"])
            try #require(outcome.status == 0, "\(outcome.stderr)")
            let decoded = try JSONDecoder().decode(DiagReport.self, from: Data(outcome.stdout.utf8))
            report = decoded
            return decoded.status.uplink?.lastError != nil && decoded.status.uptimeSeconds > 6
        }
        let json = try #require(report)
        #expect(json.status.uplink?.lastError != nil, "the link never reported an error")
        #expect(json.versions.api == "\(APIVersion.major).\(APIVersion.minor)")
        #expect(json.versions.sqlite.hasPrefix("3."))
        #expect(!json.versions.libgps.isEmpty && json.versions.kernel.hasPrefix("Linux "))
        #expect(json.storage.databaseBytes > 0)
        #expect((json.storage.freeBytes ?? 0) > 0 && (json.storage.totalBytes ?? 0) >= (json.storage.freeBytes ?? 0))
        #expect(json.config.effective["backend.password"] == "\"<redacted>\"")
        #expect(json.config.effective["backend.url"] == "\"http://127.0.0.1:9\"")
        #expect(json.config.warnings.contains { $0.contains("sampling.movinghz: unknown key, ignored (did you mean sampling.moving_hz?)") })
        let fileText = try #require(json.config.fileText)
        #expect(fileText.contains("password = \"<redacted>\"") && fileText.contains("movinghz = 2"))
        // The config warning logged at start is among the kept warnings, with its catalog id.
        #expect(json.warnings.contains { $0.messageID == "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f74" && $0.level == "warning" })
        #expect(json.warningsTotal >= json.warnings.count)
        // gpsd is absent (nothing on its port): the daemon retries every few seconds but warns once.
        #expect(json.warnings.filter { $0.messageID == "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f76" }.count == 1, "\(json.warnings)")

        let screen = try runProgram(ctl, socket + ["diag"])
        #expect(screen.status == 0, "\(screen.stderr)")
        for expected in ["driverd \(json.versions.daemon) (API", "SQLite 3.", "gps ", "backend ", "queued ", "error ",
                         "shift ", "disk ", "free of", "config ", "did you mean sampling.moving_hz?", "warnings "] {
            #expect(screen.stdout.contains(expected), "no \"\(expected)\" in:\n\(screen.stdout)")
        }
        #expect(screen.stdout.split(separator: "\n").count <= 24, "more than one screen:\n\(screen.stdout)")

        let directory = TemporaryDirectory()
        let bundle = directory.file("support.tar.gz")
        let written = try runProgram(ctl, socket + ["diag", "--bundle", bundle])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stderr.contains("wrote \(bundle)"))
        let listing = try runProgram("/bin/tar", ["-tzf", bundle])
        let names = Set(listing.stdout.split(separator: "\n").compactMap { $0.split(separator: "/").dropFirst().first.map(String.init) })
        #expect(names == ["report.txt", "report.json", "driverd.toml", "effective-config.toml", "journal.txt"], "\(listing.stdout)")
        let unpacked = directory.file("unpacked")
        try FileManager.default.createDirectory(atPath: unpacked, withIntermediateDirectories: true)
        #expect(try runProgram("/bin/tar", ["-xzf", bundle, "-C", unpacked]).status == 0)
        let grep = try runProgram("/bin/grep", ["-r", "-l", Self.secret, unpacked])
        #expect(grep.status == 1, "the password is in the bundle: \(grep.stdout)")
        let root = try #require(try FileManager.default.contentsOfDirectory(atPath: unpacked).first)
        let effective = try String(contentsOfFile: "\(unpacked)/\(root)/effective-config.toml", encoding: .utf8)
        #expect(effective.contains("[backend]\nca_file = \"\"\nclaim_token = \"\"\npassword = \"<redacted>\"\ntpm = \"auto\"\nurl = \"http://127.0.0.1:9\"\nusername = \"unit-7\""))
        let reportJSON = try Data(contentsOf: URL(fileURLWithPath: "\(unpacked)/\(root)/report.json"))
        #expect(try JSONDecoder().decode(DiagReport.self, from: reportJSON).versions == json.versions)
    }
}
