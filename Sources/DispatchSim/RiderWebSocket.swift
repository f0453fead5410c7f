import BackendContract
import DispatchSimCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket

/// `/api/v1/rider/ws`: location batches up, acks and pushes down. Each connection has a writer task fed by
/// the hub (pushes, acks, a close from the fault injector) and a reader loop.
struct RiderWebSocket {
    let state: SimState
    let hub: WebSocketHub
    let faults: FaultInjector
    static let maxMessageBytes = LocationBatch.maxBytes + 4096

    func add(to group: RouterGroup<SimContext>) {
        group.ws("ws") { request, context in
            _ = try context.requireDriver()
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                throw SimHTTPError(.upgradeRequired, "this is a WebSocket endpoint: send Upgrade: websocket")
            }
            guard let lastPushId = Self.lastPushId(request) else { return .upgrade([:]) }
            return .upgrade([.pushCatchUp: "\(lastPushId)"])
        } onUpgrade: { inbound, outbound, context in
            guard let driverId = context.requestContext.driverId else { return }
            let (frames, continuation) = AsyncStream<WebSocketHub.Outbound>.makeStream()
            let id = await state.register(driverId: driverId, continuation: continuation)
            context.logger.info("rider WebSocket open", metadata: ["driver": "\(driverId)"])
            // The upgrade named the last push seen: its catch-up now, as a `hello` would start it.
            if let lastPushId = Self.lastPushId(context.request) {
                await state.replay(connection: id, driverId: driverId, after: lastPushId)
            }
            defer { continuation.finish() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await frame in frames {
                        switch frame {
                        case .text(let text): try await outbound.write(.text(text))
                        case .close:
                            try await outbound.close(.goingAway, reason: "closed by dispatch-sim")
                            return
                        }
                    }
                }
                group.addTask {
                    for try await message in inbound.messages(maxSize: Self.maxMessageBytes) {
                        guard case .text(let text) = message else {
                            continuation.yield(.text(SimState.frame(.error(.init(code: .badRequest, message: "send JSON text frames")))))
                            continue
                        }
                        // A frame's cost on the wire: its text and a 6 to 14 byte header (8 counted).
                        let decision = faults.frame(path: BackendPaths.webSocket, bytes: text.utf8.count + 8)
                        let latencyMs = faults.frameLatencyMs(path: BackendPaths.webSocket)
                        if latencyMs > 0 { try await Task.sleep(for: .milliseconds(latencyMs)) }
                        switch decision {
                        case .dropBefore:
                            // A lost frame is a lost connection (TCP loses no message it keeps): closed unhandled.
                            context.logger.info("fault: WebSocket closed before a frame was handled", metadata: ["driver": "\(driverId)"])
                            return
                        case .dropAfter:
                            let (_, lost) = AsyncStream<WebSocketHub.Outbound>.makeStream()
                            await handle(text, driverId: driverId, connection: id, reply: lost)
                            context.logger.info("fault: WebSocket closed after a frame was handled", metadata: ["driver": "\(driverId)"])
                            return
                        case .pass, .error:
                            await handle(text, driverId: driverId, connection: id, reply: continuation)
                        }
                    }
                }
                try await group.next()
                group.cancelAll()
            }
            await state.unregister(id)
            context.logger.info("rider WebSocket closed", metadata: ["driver": "\(driverId)"])
        }
    }

    /// The upgrade's `lastPushId` (a push id, 0 or more), nil without one.
    private static func lastPushId(_ request: Request) -> Int? {
        request.uri.queryParameters.get(BackendPaths.lastPushIdQuery, as: Int.self).flatMap { $0 >= 0 ? $0 : nil }
    }

    private func handle(_ text: String, driverId: String, connection: Int, reply: AsyncStream<WebSocketHub.Outbound>.Continuation) async {
        do {
            switch try SimJSON.decode(WSClientMessage.self, from: Data(text.utf8)) {
            case .hello(let lastPushId):
                await state.replay(connection: connection, driverId: driverId, after: lastPushId)
            case .locations(let batch):
                try RiderRoutes.validate(batch)
                let ack = try await state.change { world, now in world.ingest(batch: batch, driverId: driverId, now: now, overWebSocket: true).ack }
                reply.yield(.text(SimState.frame(.ack(ack))))
            }
        } catch let error as SimHTTPError {
            reply.yield(.text(SimState.frame(.error(error.detail))))
        } catch {
            reply.yield(.text(SimState.frame(.error(.init(code: .internalError, message: "\(error)")))))
        }
    }
}
