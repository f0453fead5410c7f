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

    @Test("a table name with a character a bare name may not have (outside ASCII, or punctuation) is an error with its place, not an abort in the TOML library (found by fuzzing); quoted, in a value or in a multi-line string it is fine")
    func unusableTableName() throws {
        #expect {
            try ConfigFile.parse("[gps]\ngpsd = \"127.0.0.1:2947\"\n  [ü]\n", path: "/etc/x.toml")
        } throws: { error in
            "\(error)".hasPrefix("/etc/x.toml:3:4: a table name")
        }
        #expect(ConfigFile.unusableTableName(in: "[[a.é]]") != nil)
        #expect(ConfigFile.unusableTableName(in: "[%backend]") != nil)
        #expect(ConfigFile.unusableTableName(in: "[ backend . x_y-z ]\n[[a]]") == nil)
        #expect(ConfigFile.unusableTableName(in: "[\"ü\"]\nname = \"Müller\" # ä\n") == nil)
        let multiline = "[kiosk]\nnote = " + String(repeating: "\"", count: 3) + "\n[ü]\n" + String(repeating: "\"", count: 3) + "\n[gps]\n"
        #expect(ConfigFile.unusableTableName(in: multiline) == nil)
        #expect(try ConfigFile.parse("[vehicle]\nname = \"Größe\"\n")["vehicle.name"] != nil)
        // An empty part: a lone `[` or `[[` (a typo that stopped driverd at every start), a leading dot.
        for header in ["[", "[ ", "[[", "[.]", "[.a]", "[a.]", "[ a . ]", "[]"] {
            #expect(ConfigFile.unusableTableName(in: "[gps]\n\(header)\nurl = 1\n")?.line == 2, "\(header)")
        }
        #expect(ConfigFile.unusableTableName(in: "[ 'a' . \"b c\" ]\n[[x.y]] # table array\n") == nil)
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
