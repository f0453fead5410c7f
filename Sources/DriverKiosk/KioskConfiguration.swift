import FoundationEssentials
import TOMLReader

/// The kiosk's settings: `/etc/driverd/kiosk.toml`, then the command line.
public struct KioskConfiguration: Sendable, Equatable {
    /// Loopback only: any other address is refused at start.
    public var host = "127.0.0.1"
    public var port = 8080
    public var socket = "/run/driverd/driverd.sock"
    /// The page (HTML, CSS, JavaScript) as the package ships it.
    public var www = "/usr/share/driverd-kiosk/www"
    /// The token file and the photos handed to driverd; systemd's `RuntimeDirectory=`.
    public var runtimeDirectory = "/run/driverd-kiosk"
    /// A map tile URL template (`https://tiles.example/{z}/{x}/{y}.png`); empty: no tiles, a plain map.
    public var tiles = ""
    /// A local MBTiles file of raster tiles the kiosk serves itself (`/tiles/{z}/{x}/{y}`); empty: none.
    public var tilesFile = ""
    public var tilesAttribution = ""
    /// The units of the roads the fleet drives: they follow the road signs, not the driver's language (a Polish
    /// driver in Germany reads km, an English one in Ireland too, in England miles).
    public var units = DistanceUnits.metric
    public var voiceEnabled = true
    /// 0…100 % of espeak-ng's normal amplitude.
    public var voiceVolume = 80
    /// espeak-ng's voice name.
    public var voiceName = "en"
    /// Words per minute.
    public var voiceRate = 165
    /// Test mode: prompts are rendered to WAV files here instead of being played.
    public var voiceWavDirectory: String?

    public init() {}

    public struct Problem: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public static let loopbackHosts: Set<String> = ["127.0.0.1", "::1", "localhost"]

    /// Reads the file's `[kiosk]` and `[voice]` tables over the defaults; a missing file is the defaults.
    public static func load(path: String?) throws(Problem) -> KioskConfiguration {
        var configuration = KioskConfiguration()
        guard let path else { return configuration }
        // The failure is told apart below: no file is the defaults, a file that cannot be read is refused.
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            if FileManager.default.fileExists(atPath: path) { throw Problem("\(path): cannot be read") }
            return configuration
        }
        let table: TOMLTable
        do { table = try TOMLReader.table(text) } catch { throw Problem("\(path):\(error)") }
        let kiosk = table["kiosk"]?.table
        let voice = table["voice"]?.table
        for (name, section) in [("kiosk", kiosk), ("voice", voice)] {
            for key in section?.keys ?? [] where !Self.knownKeys.contains("\(name).\(key)") {
                throw Problem("\(path): unknown key \(name).\(key)")
            }
        }
        if let listen = kiosk?["listen"]?.string {
            guard let (host, port) = Self.parseListen(listen) else { throw Problem("kiosk.listen: \(listen) is not host:port") }
            configuration.host = host
            configuration.port = port
        }
        if let socket = kiosk?["socket"]?.string { configuration.socket = socket }
        if let www = kiosk?["www"]?.string { configuration.www = www }
        if let tiles = kiosk?["tiles"]?.string { configuration.tiles = tiles }
        if let file = kiosk?["tiles_file"]?.string { configuration.tilesFile = file }
        if let attribution = kiosk?["tiles_attribution"]?.string { configuration.tilesAttribution = attribution }
        if let units = kiosk?["units"]?.string { configuration.units = try DistanceUnits(setting: units) }
        if let enabled = voice?["enabled"]?.bool { configuration.voiceEnabled = enabled }
        if let volume = voice?["volume"]?.int { configuration.voiceVolume = volume }
        if let name = voice?["voice"]?.string { configuration.voiceName = name }
        if let rate = voice?["rate"]?.int { configuration.voiceRate = rate }
        try configuration.validate()
        return configuration
    }

    static let knownKeys: Set<String> = [
        "kiosk.listen", "kiosk.socket", "kiosk.www", "kiosk.tiles", "kiosk.tiles_file", "kiosk.tiles_attribution", "kiosk.units",
        "voice.enabled", "voice.volume", "voice.voice", "voice.rate",
    ]

    public func validate() throws(Problem) {
        guard Self.loopbackHosts.contains(host) else {
            throw Problem("kiosk.listen: \(host) is not a loopback address (127.0.0.1, ::1, localhost): the screen is for this unit only")
        }
        guard (0...65535).contains(port) else { throw Problem("kiosk.listen: port \(port) out of range") }
        guard (0...100).contains(voiceVolume) else { throw Problem("voice.volume: \(voiceVolume), expected 0…100") }
        guard (80...450).contains(voiceRate) else { throw Problem("voice.rate: \(voiceRate) words a minute, expected 80…450") }
        guard tiles.isEmpty || ["{z}", "{x}", "{y}"].allSatisfy({ tiles.firstRange(of: $0) != nil }) else {
            throw Problem("kiosk.tiles: a URL template with {z}, {x} and {y}")
        }
        guard tiles.isEmpty || tilesFile.isEmpty else { throw Problem("kiosk.tiles and kiosk.tiles_file: one source of tiles, not both") }
        guard voiceName.allSatisfy({ $0.isLetter || $0.isNumber || "-_+".contains($0) }), !voiceName.isEmpty else {
            throw Problem("voice.voice: \(voiceName) is not an espeak-ng voice name")
        }
    }

    /// Distances and speeds on the screen: metric (m, km, km/h), miles with yards (the UK) or with feet (the US).
    public enum DistanceUnits: String, Sendable, Equatable, CaseIterable {
        case metric, uk, us

        public init(setting: String) throws(Problem) {
            guard let units = Self(rawValue: setting) else {
                throw Problem("kiosk.units: \(setting), expected one of \(Self.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self = units
        }
    }

    /// `127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`.
    public static func parseListen(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }
}
