import DriverDaemon
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

    @Test("an absent file is not an error")
    func absent() throws {
        #expect(try ConfigFile.load(path: "/nonexistent/driverd.toml") == nil)
    }

    @Test("the shipped example config is valid and documents every key")
    func shippedExample() throws {
        let path = #filePath.replacingOccurrences(of: "Tests/DriverDaemonTests/ConfigFileTests.swift", with: "packaging/driverd.toml")
        let values = try #require(try ConfigFile.load(path: path))
        let parsed = DaemonConfig.parse(values)
        #expect(parsed.errors.isEmpty && parsed.warnings.isEmpty, "\(parsed.errors) \(parsed.warnings)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for key in DaemonConfig.knownKeys {
            let name = String(key.split(separator: ".").last!)
            #expect(text.contains("\(name) ="), "packaging/driverd.toml does not document \(key)")
        }
    }
}
