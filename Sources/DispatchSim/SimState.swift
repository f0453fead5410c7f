import BackendContract
import DispatchSimCore
import Foundation
import Logging

/// Owns the world: every change runs here, in order, then is saved (with `--state`) and its new pushes go
/// out to the driver's WebSockets in id order.
actor SimState {
    struct Snapshot: Codable {
        var world: SimWorld
        /// The token signing key, base64, so tokens stay valid across a restart.
        var tokenKey: String
    }

    private(set) var world: SimWorld
    let tokenKey: Data
    private let stateFile: URL?
    private let hub: WebSocketHub
    private let logger: Logger
    /// The newest push id each driver's WebSockets have been sent.
    private var delivered: [String: Int] = [:]

    init(scenario: Scenario, stateFile: URL?, hub: WebSocketHub, logger: Logger) throws {
        self.stateFile = stateFile
        self.hub = hub
        self.logger = logger
        // No state file yet is the expected first start.
        if let stateFile, let data = try? Data(contentsOf: stateFile) {
            let snapshot: Snapshot
            do {
                snapshot = try JSONDecoder().decode(Snapshot.self, from: data)
            } catch {
                throw SimStartupError("cannot read state file \(stateFile.path): \(error)")
            }
            world = snapshot.world
            tokenKey = Data(base64Encoded: snapshot.tokenKey) ?? Self.randomKey()
            logger.info("state restored", metadata: ["file": "\(stateFile.path)"])
        } else {
            world = SimWorld(scenario: scenario, now: Self.now())
            tokenKey = Self.randomKey()
        }
        for driver in world.drivers { delivered[driver.id] = world.pushes(driverId: driver.id, after: 0).last?.id ?? 0 }
    }

    static func now() -> Double { Date().timeIntervalSince1970 }

    private static func randomKey() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Runs one change of the world with the current time, saves it and sends the pushes it made.
    func change<T: Sendable>(_ body: (inout SimWorld, Double) throws -> T) throws -> T {
        let result = try body(&world, Self.now())
        save()
        deliverPushes()
        return result
    }

    func read<T: Sendable>(_ body: (SimWorld, Double) -> T) -> T { body(world, Self.now()) }

    func register(driverId: String, continuation: AsyncStream<WebSocketHub.Outbound>.Continuation) -> Int {
        hub.register(driverId: driverId, continuation: continuation)
    }

    func unregister(_ id: Int) {
        hub.unregister(id)
    }

    /// A connection's `hello`: every push after `lastPushId`, then the new ones live. Both happen on this actor,
    /// where pushes are made, so none comes before an older one (a client keeps the newest id it has seen).
    func replay(connection id: Int, driverId: String, after lastPushId: Int) {
        for push in world.pushes(driverId: driverId, after: lastPushId) {
            hub.send(Self.frame(.push(push)), toConnection: id)
        }
        hub.goLive(id)
    }

    static func frame(_ message: WSServerMessage) -> String {
        // Cannot fail: the messages hold strings and finite numbers.
        (try? SimJSON.encoder.encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    private func deliverPushes() {
        for driver in world.drivers {
            for push in world.pushes(driverId: driver.id, after: delivered[driver.id] ?? 0) {
                hub.send(Self.frame(.push(push)), toDriver: driver.id)
                delivered[driver.id] = push.id
            }
        }
    }

    private func save() {
        guard let stateFile else { return }
        do {
            let data = try SimJSON.encoder.encode(Snapshot(world: world, tokenKey: tokenKey.base64EncodedString()))
            try data.write(to: stateFile, options: .atomic)
        } catch {
            logger.error("cannot save state", metadata: ["file": "\(stateFile.path)", "error": "\(error)"])
        }
    }
}

struct SimStartupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
