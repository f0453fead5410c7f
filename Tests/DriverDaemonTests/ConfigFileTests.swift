@testable import DriverDaemon
import DriverDomain
import Testing

@Suite("Config file")
struct ConfigFileTests {
    @Test("TOML sections flatten to section.key")
    func flatten() throws {
        let values = try ConfigFile.parse("""
            [daemon]
            log_level = "debug"
            [rpc]
            socket = "/tmp/s.sock"
            max_line_bytes = 2048
            [future.nested]
            ratio = 0.5
            on = true
            list = [1, 2]
            """)
        #expect(values["daemon.log_level"] == .string("debug"))
        #expect(values["rpc.socket"] == .string("/tmp/s.sock"))
        #expect(values["rpc.max_line_bytes"] == .integer(2048))
        #expect(values["future.nested.ratio"] == .double(0.5))
        #expect(values["future.nested.on"] == .bool(true))
        #expect(values["future.nested.list"] == .other("a TOML array"))
    }

    @Test("a syntax error names the file, line and column")
    func syntaxError() {
        #expect {
            try ConfigFile.parse("[rpc]\nsocket = \n", path: "/etc/x.toml")
        } throws: { error in
            "\(error)".hasPrefix("/etc/x.toml:2:")
        }
    }

    @Test("a table name toml++ aborted on is an error with the file, line and column (TOMLReaderTests has the cases)")
    func unusableTableName() throws {
        #expect {
            try ConfigFile.parse("[gps]\ngpsd = \"127.0.0.1:2947\"\n  [ü]\n", path: "/etc/x.toml")
        } throws: { error in
            "\(error)".hasPrefix("/etc/x.toml:3:4: a key is letters")
        }
        #expect {
            try ConfigFile.parse("[gps]\r\nurl = 1\r\n[\u{30A}]\r\n", path: "/etc/x.toml")
        } throws: { error in
            "\(error)".hasPrefix("/etc/x.toml:3:2: a key is letters")
        }
        #expect(try ConfigFile.parse("[vehicle]\nname = \"Größe\"\n")["vehicle.name"] != nil)
    }

    @Test("an absent file is not an error")
    func absent() throws {
        #expect(try ConfigFile.load(path: "/nonexistent/driverd.toml") == nil)
    }

    @Test("the shipped config documents every key, commented out at its default value")
    func shippedExample() throws {
        let path = #filePath.replacingOccurrences(of: "Tests/DriverDaemonTests/ConfigFileTests.swift", with: "packaging/driverd.toml")
        let shipped = try #require(try ConfigFile.load(path: path))
        #expect(shipped.isEmpty, "the shipped file sets \(shipped.keys.sorted()); every key should be commented out")

        // Uncommenting every `#key = value` line must give exactly the known keys, each at its default.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#") && line.dropFirst().first.map { $0.isLetter && $0.isLowercase } == true ? line.dropFirst() : line
        }.joined(separator: "\n")
        let values = try ConfigFile.parse(uncommented, path: path)
        #expect(Set(values.keys) == Set(DaemonConfig.knownKeys))
        let parsed = DaemonConfig.parse(values)
        #expect(parsed.errors.isEmpty && parsed.warnings.isEmpty, "\(parsed.errors) \(parsed.warnings)")
        #expect(parsed.config == DaemonConfig(), "a value in the shipped file differs from the built-in default")
    }
}
