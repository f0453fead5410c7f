import ArgumentParser
import DriverKiosk
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import RuntimeMetadata

/// driverd-kiosk: the driver's screen (a page served on loopback, bridged to driverd's local API) and voice.
@main
struct DriverdKiosk: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "driverd-kiosk",
        abstract: "Serve the driver's screen on loopback and speak prompts, over driverd's local API.",
        discussion: """
            Open the URL written to <runtime-dir>/url (it carries the access token) in the unit's kiosk browser. \
            Settings come from /etc/driverd/kiosk.toml; options override them.
            """,
        version: KioskVersion.current)

    @Option(help: "The settings file.") var config = "/etc/driverd/kiosk.toml"
    @Option(help: "host:port to serve on; loopback only (port 0: any free port).") var listen: String?
    @Option(help: "driverd's socket.") var socket: String?
    @Option(help: "The page's files.") var www: String?
    @Option(help: "Where the token, the URL and photos for driverd go.") var runtimeDir: String?
    @Option(help: "A map tile URL template with {z}, {x} and {y}.") var tiles: String?
    @Option(help: "A local MBTiles file of raster tiles, served by the kiosk itself.") var tilesFile: String?
    @Option(help: "Distances and speeds: metric, uk (miles, yards) or us (miles, feet).") var units: String?
    @Flag(help: "Do not speak.") var noVoice = false
    @Option(help: "Test mode: render each prompt to a WAV file in this directory instead of playing it.") var voiceWavDir: String?
    @Option(help: "Log level (trace, debug, info, notice, warning, error, critical).") var logLevel = "info"

    func run() async throws {
        // Before the server accepts: Swift's runtime can crash when two connections build this metadata at once.
        RuntimeMetadata.instantiateHTTPServerTypes()
        var settings: KioskConfiguration
        do {
            settings = try KioskConfiguration.load(path: config)
            if let listen {
                guard let (host, port) = KioskConfiguration.parseListen(listen) else { throw ValidationError("--listen: \(listen) is not host:port") }
                settings.host = host
                settings.port = port
            }
            if let socket { settings.socket = socket }
            if let www { settings.www = www }
            if let runtimeDir { settings.runtimeDirectory = runtimeDir }
            if let tiles { settings.tiles = tiles }
            if let tilesFile { settings.tilesFile = tilesFile }
            if let units { settings.units = try KioskConfiguration.DistanceUnits(setting: units) }
            if noVoice { settings.voiceEnabled = false }
            if let voiceWavDir { settings.voiceWavDirectory = voiceWavDir }
            try settings.validate()
        } catch let problem as KioskConfiguration.Problem {
            throw ValidationError(problem.description)
        }
        guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("--log-level: \(logLevel) is not a level") }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "driverd-kiosk")
        let token = KioskAccess.randomToken()
        let access = Mutex<KioskAccess?>(nil)
        let runtimeDirectory = settings.runtimeDirectory
        let host = settings.host.contains(":" as Character) ? "[\(settings.host)]" : settings.host
        var tiles: MBTiles?
        if !settings.tilesFile.isEmpty {
            do {
                tiles = try MBTiles(path: settings.tilesFile)
            } catch {
                throw ValidationError(error.description)
            }
            // The page asks the kiosk itself for tiles, and shows the file's attribution unless the settings name one.
            settings.tiles = MBTiles.pageTemplate
            if settings.tilesAttribution.isEmpty { settings.tilesAttribution = tiles?.attribution ?? "" }
        }
        let bridge = KioskBridge(configuration: settings, logger: logger)
        let language = KioskLanguage(www: settings.www)
        let application = KioskServer.makeApplication(
            settings, access: { access.withLock { $0 } }, bridge: bridge, language: language, tiles: tiles, logger: logger,
            onRunning: { port in
                let url = "http://\(host):\(port)/?token=\(token)"
                do {
                    try RuntimeFiles.write(token: token, url: url, in: runtimeDirectory)
                } catch {
                    logger.critical("\(error)")
                }
                access.withLock { $0 = KioskAccess(token: token, port: port) }
                logger.notice("serving the driver's screen on http://\(host):\(port)/ (the URL with its token is in \(runtimeDirectory)/url)")
            })
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: application), .init(service: VoiceService(configuration: settings, language: language, logger: logger))],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
