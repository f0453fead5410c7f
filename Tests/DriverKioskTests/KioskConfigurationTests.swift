import FoundationEssentials
import Testing

@testable import DriverKiosk

@Suite("The kiosk's settings")
struct KioskConfigurationTests {
    @Test("only loopback addresses are served")
    func loopbackOnly() {
        var settings = KioskConfiguration()
        settings.host = "0.0.0.0"
        #expect(throws: KioskConfiguration.Problem.self) { try settings.validate() }
        settings.host = "::1"
        #expect(throws: Never.self) { try settings.validate() }
    }

    @Test("listen addresses parse, IPv6 in brackets")
    func listen() {
        #expect(KioskConfiguration.parseListen("127.0.0.1:8080")! == ("127.0.0.1", 8080))
        #expect(KioskConfiguration.parseListen("[::1]:0")! == ("::1", 0))
        #expect(KioskConfiguration.parseListen("localhost") == nil)
    }

    @Test("a tile template needs {z}, {x} and {y}; the volume 0…100")
    func values() {
        var settings = KioskConfiguration()
        settings.tiles = "https://tiles.example/{z}/{x}.png"
        #expect(throws: KioskConfiguration.Problem.self) { try settings.validate() }
        settings.tiles = "https://tiles.example/{z}/{x}/{y}.png"
        settings.voiceVolume = 101
        #expect(throws: KioskConfiguration.Problem.self) { try settings.validate() }
    }

    private func load(_ toml: String) throws(KioskConfiguration.Problem) -> KioskConfiguration {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-\(UInt64.random(in: 0...UInt64.max)).toml").path
        FileManager.default.createFile(atPath: path, contents: Data(toml.utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try KioskConfiguration.load(path: path)
    }

    @Test("units: metric by default, uk and us from the file")
    func units() throws {
        #expect(try load("").units == .metric)
        #expect(try load("[kiosk]\nunits = \"uk\"\n").units == .uk)
        #expect(try load("[kiosk]\nunits = \"us\"\n").units == .us)
    }

    @Test("other units and unknown keys are refused, with the choices")
    func unknownUnits() {
        let error = #expect(throws: KioskConfiguration.Problem.self) { try load("[kiosk]\nunits = \"miles\"\n") }
        #expect(error?.description == "kiosk.units: miles, expected one of metric, uk, us")
        #expect(throws: KioskConfiguration.Problem.self) { try load("[kiosk]\nunit = \"uk\"\n") }
    }

    @Test("a table header toml++ aborted on is refused with its place: the kiosk reads its file through TOMLReader too")
    func unusableHeader() {
        let error = #expect(throws: KioskConfiguration.Problem.self) { try load("[kiosk]\r\nunits = \"uk\"\r\n[ü]\r\n") }
        #expect(error?.description.hasSuffix(":3:2: a key is letters A-Z a-z, digits, _ and - (or quoted), not 'ü'") == true, "\(String(describing: error))")
    }
}
