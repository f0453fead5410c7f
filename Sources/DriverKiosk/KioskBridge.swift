import DriverAPI
import HummingbirdWebSocket
import JSONRPC
import Logging
import NIOCore
import NIOWebSocket

/// One page's WebSocket bridged to its own connection to driverd, line for line: what the page sends passes
/// `BridgePolicy`; what driverd sends (answers and notifications) goes to the page as it is. When driverd
/// goes away the page's socket is closed with the reason, and the page reconnects by itself.
public struct KioskBridge: Sendable {
    let configuration: KioskConfiguration
    let policy = BridgePolicy()
    let photos: PhotoDrop
    let logger: Logger

    public init(configuration: KioskConfiguration, logger: Logger) {
        self.configuration = configuration
        photos = PhotoDrop(runtimeDirectory: configuration.runtimeDirectory)
        self.logger = logger
    }

    public func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let daemon: DaemonLink.Channel
        do {
            daemon = try await DaemonLink.connect(configuration.socket)
        } catch {
            logger.notice("driverd is not reachable at \(configuration.socket): \(error)")
            try? await outbound.close(.unexpectedServerError, reason: "driverd is not running")  // a screen gone already: the same end
            return
        }
        do {
            try await daemon.executeThenClose { fromDaemon, toDaemon in
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        for try await frame in fromDaemon {
                            guard case .line(let line) = frame else { continue }
                            try await outbound.write(.text(String(buffer: line)))
                        }
                        return true
                    }
                    group.addTask {
                        for try await message in inbound.messages(maxSize: BridgePolicy.maxFrameBytes) {
                            guard case .text(let text) = message else {
                                try await reply(Envelope.error(id: .null, WireError(code: -32600, message: "send JSON text frames")), outbound)
                                continue
                            }
                            try await handle(Array(text.utf8), toDaemon: toDaemon, outbound: outbound)
                        }
                        return false
                    }
                    let daemonClosed = try await group.next() ?? false
                    group.cancelAll()
                    // A screen gone already: the same end.
                    if daemonClosed { try? await outbound.close(.goingAway, reason: "driverd closed the connection") }
                }
            }
        } catch {
            logger.debug("bridge ended: \(error)")
            try? await outbound.close(.goingAway, reason: "driverd closed the connection")  // a screen gone already: the same end
        }
    }

    private func handle(_ frame: [UInt8], toDaemon: NIOAsyncChannelOutboundWriter<ByteBuffer>, outbound: WebSocketOutboundWriter) async throws {
        switch policy.decide(frame) {
        case .forward(let line):
            try await toDaemon.write(DaemonLink.line(line))
        case .reply(let line):
            try await reply(line, outbound)
        case .drop:
            break
        case .describe(let id):
            try await reply(Envelope.response(id: id, result: JSONWriter.bytes(describe())), outbound)
        case .photo(let id, let taskId, let image, let fileExtension):
            let path: String
            do {
                path = try photos.write(image, fileExtension: fileExtension)
            } catch {
                logger.error("cannot hand a photo to driverd: \(error)")
                try await reply(Envelope.error(id: id, WireError(code: -32603, message: "the kiosk cannot store the photo")), outbound)
                return
            }
            try await toDaemon.write(DaemonLink.line(BridgePolicy.photoRequest(id: id, taskId: taskId, path: path)))
        }
    }

    private func reply(_ line: [UInt8], _ outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.text(String(decoding: line, as: UTF8.self)))
    }

    /// What the page needs to know of the kiosk: the map tiles, the units, the voice, and the local API's error numbers
    /// by name (the page never copies them).
    func describe() -> JSONValue {
        .object([
            "kioskVersion": .string(KioskVersion.current),
            "errors": .object(Dictionary(uniqueKeysWithValues: APIError.Kind.all.compactMap { kind in
                kind.name.map { ($0, JSONValue.number(String(kind.wireCode))) }
            })),
            "tiles": configuration.tiles.isEmpty ? .null : .string(configuration.tiles),
            "tilesAttribution": .string(configuration.tilesAttribution),
            "units": .string(configuration.units.rawValue),
            "voice": .object([
                "enabled": .bool(configuration.voiceEnabled), "volume": .number(String(configuration.voiceVolume)),
            ]),
        ])
    }
}

public enum KioskVersion {
    public static let current = "0.1.0"
}
