// swift-tools-version: 6.1
import PackageDescription

/// Keys and TLS: what the TPM's key needs, and what its tests need to try it in a handshake.
let keysAndTLS: [Target.Dependency] = [
    .product(name: "Crypto", package: "swift-crypto"),
    .product(name: "X509", package: "swift-certificates"),
    .product(name: "SwiftASN1", package: "swift-asn1"),
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOPosix", package: "swift-nio"),
    .product(name: "NIOSSL", package: "swift-nio-ssl"),
]

let package = Package(
    name: "driverd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "driverd", targets: ["driverd"]),
        .executable(name: "driverctl", targets: ["driverctl"]),
        .executable(name: "dispatch-sim", targets: ["dispatch-sim"]),
        .executable(name: "driverd-kiosk", targets: ["driverd-kiosk"]),
        // For the fuzzing package (Fuzz/), which builds it with -sanitize=fuzzer,address.
        .library(name: "FuzzTargets", targets: ["FuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Without the default traits: "FullFoundation" would link Foundation (and ICU) into the kiosk for dates in URL-encoded forms it never reads.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // Exact: BackendClient's WebSocket handshake uses its frame handler through an SPI (WebSocketUpgrade.swift).
        .package(url: "https://github.com/hummingbird-project/swift-websocket", exact: "1.6.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
    ],
    targets: [
        // The local API contract: Codable types, method names, error codes, API version. No I/O.
        // `Methods.all` is derived from the namespaces' files at build time (Plugins/MethodList).
        .target(name: "DriverAPI", plugins: ["MethodList"]),
        .plugin(name: "MethodList", capability: .buildTool()),
        // JSON-RPC 2.0: JSON values, framing, dispatch, the NIO Unix-socket server and a blocking client.
        .target(
            name: "JSONRPC",
            dependencies: [
                "DriverAPI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The pure domain: configuration model and validation, status summaries. No I/O.
        .target(name: "DriverDomain", dependencies: ["DriverAPI"]),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // The only Swift target that imports CSystemd.
        .target(name: "SystemdKit", dependencies: ["CSystemd"]),
        .systemLibrary(
            name: "CGPS",
            pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]
        ),
        // The kernel's clock discipline state (adjtimex), from glibc's <sys/timex.h>; only DriverDaemon imports it.
        .systemLibrary(name: "CTimex"),
        // A reader's thread of its own and the pipe that wakes it (GPSKit's and OBDKit's).
        .target(name: "ReaderThread"),
        // Runs a program with posix_spawn (Foundation's Process would link ICU): driverctl, driverd-update, the voice.
        .target(name: "Spawn"),
        // The only Swift target that imports CGPS: a gpsd reader on its own thread, publishing fixes and link states.
        .target(name: "GPSKit", dependencies: ["CGPS", "DriverDomain", "ReaderThread"]),
        // The only Swift target that speaks to an OBD-II adapter (ELM327 over a serial line or TCP): a reader on its
        // own thread, publishing link states and the vehicle's readings; the reply parser and PID decoding are pure.
        .target(name: "OBDKit", dependencies: ["DriverAPI", "DriverDomain", "ReaderThread"]),
        .systemLibrary(
            name: "CTSS2",
            pkgConfig: "tss2-esys",
            providers: [.apt(["libtss2-dev"])]
        ),
        // The only Swift target that imports CTSS2: the unit's key made and held in a TPM 2.0, signing for the TLS
        // handshake (NIOSSL's custom key) and for certificate requests (swift-certificates' custom key).
        .target(name: "TPMKit", dependencies: ["CTSS2"] + keysAndTLS),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The only Swift target that imports CSQLite: connections, a WAL pool (one writer, few readers), Codable
        // records, migrations. In place of GRDB, whose Foundation use links ICU's 30 MB into the daemon (docs/ARCHITECTURE.md, "Why no GRDB and no ICU").
        .target(name: "SQLiteKit", dependencies: ["CSQLite"]),
        // The SQLite store: frozen SQL migrations, one record per table, the ping recorder.
        .target(name: "DriverStore", dependencies: ["DriverDomain", "SQLiteKit", "ReaderThread"]),
        // The backend contract (docs/backend-openapi.yaml) as Codable types, paths and the polyline codec. No I/O.
        // dispatch-sim serves it; driverd's uplink speaks it.
        .target(name: "BackendContract", dependencies: ["DriverAPI", "DriverDomain"]),
        // The backend contract over HTTPS (async-http-client): the only way the daemon reaches the backend.
        .target(
            name: "BackendClient",
            dependencies: [
                "BackendContract",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "WSCompression", package: "swift-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CompressNIO", package: "compress-nio"),
                // The backend's certificate judged at a time other than the system clock's (CertificateTime).
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The reference backend's rules, pure (idempotency, transitions, OTP, batches, ETA, pushes, faults).
        .target(name: "DispatchSimCore", dependencies: ["BackendContract", "DriverAPI", "DriverDomain"]),
        // The reference backend's HTTP and WebSocket server (Hummingbird) around DispatchSimCore.
        .target(
            name: "DispatchSim",
            dependencies: [
                "BackendContract", "DispatchSimCore", "DriverDomain", "DriverAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSCompression", package: "hummingbird-websocket"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "dispatch-sim",
            dependencies: [
                "DispatchSim", "DispatchSimCore", "RuntimeMetadata",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // NMEA 0183 synthesis from waypoints (pure), used by the demo and tests.
        .target(name: "NMEASynth", dependencies: ["DriverDomain"]),
        .executableTarget(
            name: "nmea-synth",
            dependencies: ["NMEASynth", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The daemon: services, handlers, config loading, logging.
        .target(
            name: "DriverDaemon",
            dependencies: [
                "DriverAPI", "JSONRPC", "DriverDomain", "SystemdKit", "GPSKit", "OBDKit", "DriverStore", "BackendClient", "BackendContract", "ReaderThread",
                "CTimex", "TPMKit", "TOMLReader",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The one reader of TOML text (driverd.toml, kiosk.toml): TOML 1.0 in Swift, errors with their place, never an abort.
        .target(name: "TOMLReader"),
        // Type metadata built once on the main thread before event loops race to build it (a Swift 6.3.1 runtime crash).
        .target(
            name: "RuntimeMetadata",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")]
        ),
        // Reproduces that crash: two threads build the HTTP decoder's metadata at once (IntegrationTests/RuntimeMetadataTests).
        .executableTarget(
            name: "metadata-race",
            dependencies: ["RuntimeMetadata"]
        ),
        // The Swift runtime's global-executor hook by link-time reference: `dlsym` cannot see it in a static binary.
        // Only driverd imports it.
        .target(name: "CConcurrencyHook"),
        .executableTarget(
            name: "driverd",
            dependencies: [
                "DriverDaemon", "DriverctlCommands", "DriverUpdater", "CConcurrencyHook", "RuntimeMetadata",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // driverd-update: the root side of self-update (dpkg, the health gate); a name of the driverd binary.
        .target(
            name: "DriverUpdater",
            dependencies: [
                "DriverDaemon", "DriverAPI", "DriverDomain", "DriverStore", "BackendContract", "JSONRPC", "ReaderThread", "Spawn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The CLI sees only the contract and the transport.
        .target(
            name: "DriverctlCommands",
            dependencies: [
                "DriverAPI", "JSONRPC", "Spawn",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "driverctl", dependencies: ["DriverctlCommands"]),
        // The driver's screen and voice: a front end on the local API like driverctl (the contract and the
        // transport only), serving the page in kiosk/www on loopback and bridging its WebSocket to driverd.
        .target(
            name: "DriverKiosk",
            dependencies: [
                "DriverAPI", "JSONRPC", "Spawn", "SQLiteKit", "TOMLReader",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "driverd-kiosk",
            dependencies: [
                "DriverKiosk", "RuntimeMetadata",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "driverd-bench",
            dependencies: [
                "DriverAPI", "JSONRPC", "NMEASynth", "DriverDomain", "DriverStore", "BackendContract", "DispatchSimCore",
                "SQLiteKit", "ReaderThread", "BackendClient", "TPMKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Every parser of outside input as a function of bytes: libFuzzer's targets (Fuzz/, `make fuzz`), and the
        // corpus `make test` replays (Tests/FuzzCorpus).
        .target(
            name: "FuzzTargets",
            dependencies: [
                "BackendContract", "DriverAPI", "DriverDaemon", "DriverDomain", "DriverKiosk", "GPSKit", "JSONRPC", "OBDKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets"]),
        .testTarget(name: "DriverAPITests", dependencies: ["DriverAPI", "JSONRPC"], resources: [.copy("Golden")]),
        .testTarget(
            name: "JSONRPCTests",
            dependencies: ["JSONRPC", "DriverAPI", .product(name: "NIOEmbedded", package: "swift-nio")]
        ),
        .testTarget(name: "DriverDomainTests", dependencies: ["DriverDomain", "DriverAPI"]),
        .testTarget(name: "SystemdKitTests", dependencies: ["SystemdKit"]),
        .testTarget(name: "DriverKioskTests", dependencies: ["DriverKiosk", "DriverAPI", "JSONRPC", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "DriverUpdaterTests", dependencies: ["DriverUpdater", "DriverStore"]),
        .testTarget(
            name: "DriverctlCommandsTests",
            dependencies: ["DriverAPI", "DriverctlCommands", "DriverDomain", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // Unit tests of the daemon's parts, and the whole daemon built in-process (`DaemonAssembly`) against a
        // stand-in backend that answers by the reference backend's own rules.
        .testTarget(
            name: "DriverDaemonTests",
            dependencies: [
                "DriverDaemon", "DriverDomain", "DriverAPI", "DriverStore", "JSONRPC", "BackendClient", "BackendContract", "DispatchSimCore",
                "GPSKit", "OBDKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(name: "GPSKitTests", dependencies: ["GPSKit", "NMEASynth"]),
        .testTarget(name: "ReaderThreadTests", dependencies: ["ReaderThread"]),
        .testTarget(
            name: "TPMKitTests", dependencies: ["TPMKit", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")] + keysAndTLS),
        .testTarget(name: "OBDKitTests", dependencies: ["OBDKit", "DriverAPI", "DriverDomain"]),
        .testTarget(name: "DriverStoreTests", dependencies: ["DriverStore", "DriverDomain", "SQLiteKit"]),
        .testTarget(name: "SQLiteKitTests", dependencies: ["SQLiteKit"]),
        .testTarget(name: "TOMLReaderTests", dependencies: ["TOMLReader"]),
        .testTarget(name: "NMEASynthTests", dependencies: ["NMEASynth", "DriverDomain"]),
        .testTarget(name: "BackendContractTests", dependencies: ["BackendContract"]),
        .testTarget(name: "DispatchSimCoreTests", dependencies: ["DispatchSimCore", "BackendContract", "DriverDomain", "DriverAPI"]),
        // The reference backend over real loopback HTTP and WebSocket (Hummingbird's live test mode).
        .testTarget(
            name: "DispatchSimTests",
            dependencies: [
                "DispatchSim", "DispatchSimCore", "BackendContract", "DriverDomain", "DriverAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Runs the real binaries (built by `swift build`) over real sockets.
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "DriverAPI", "JSONRPC", "NMEASynth", "DriverDomain", "BackendContract", "DriverStore", "DispatchSimCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                "SQLiteKit",
            ],
            exclude: ["Support/tls_proxy.py", "Support/obd_car.py"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
