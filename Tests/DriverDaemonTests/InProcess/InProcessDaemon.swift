#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
@testable import DriverDaemon
import DriverDomain
import DriverStore
import Foundation
import JSONRPC
import Logging
import ServiceLifecycle
import Synchronization

/// The whole daemon built in-process, as `Daemon.run` builds it, with a temporary store, a stand-in backend
/// and no socket: methods are called through the dispatcher as a root front end would call them.
final class InProcessDaemon: Sendable {
    let assembly: DaemonAssembly
    let dispatcher: RPCDispatcher
    let directory: String
    let backend: StandInBackend?
    let connection = RPCConnection(id: 1, peer: PeerCredentials(pid: getpid(), uid: 0, gid: 0, supplementaryGroups: []), mayMutate: true)

    /// `credentials`: log in unattended with the built-in world's driver (else a test logs in by `auth.login`).
    /// The daemon's time: virtual, advanced by `advance(by:)` and by `waitUntil` as it polls.
    let time = ManualTime()

    init(
        backend: StandInBackend?, credentials: Bool = true, configure: (inout DaemonConfig) -> Void = { _ in }, bundleMaker: DiagBundleMaker? = nil
    ) throws {
        var template = Array("/tmp/driverd-inprocess-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        self.backend = backend
        var config = DaemonConfig()
        config.stateDirectory = directory
        config.socketPath = directory + "/driverd.sock"
        config.shiftAutoStart = true
        if backend != nil, credentials {
            config.backendUsername = "rider1"
            config.backendPassword = "demo-password"
        }
        configure(&config)
        assembly = try DaemonAssembly.make(.init(
            config: config, bundleMaker: bundleMaker, store: try Store(directory: directory), backend: backend, webSocket: nil, clock: DaemonClock(time: time),
            fixSource: .handedIn))
        dispatcher = RPCDispatcher(router: assembly.router, counters: assembly.counters, logger: Logger(label: "in-process"))
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func call<Params, Result>(_ method: Method<Params, Result>, _ params: Params) async throws -> Result {
        try await dispatcher.call(method, params, as: connection)
    }

    func call<Result>(_ method: Method<NoParams, Result>) async throws -> Result { try await call(method, NoParams()) }

    /// Runs the daemon's services while `body` runs, then stops them gracefully (the uplink's final flush).
    func running<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let group = ServiceGroup(configuration: .init(services: assembly.services, gracefulShutdownSignals: [], logger: Logger(label: "in-process")))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                let result = try await body()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    /// Lets `seconds` of the daemon's time pass: every timer due on the way fires.
    func advance(by seconds: Double) { time.advance(by: seconds) }

    /// Polls `condition`, letting the daemon's virtual time pass meanwhile (a hundredth of a second a poll, so timers
    /// come due in order), until `seconds` of it passed; fails with `what`. Real work (the store's syncs, tasks on
    /// other threads) gets real time too: at least a minute of it, for a loaded 2-core machine.
    func waitUntil(_ what: String, seconds: Double = 60, _ condition: () async throws -> Bool) async throws {
        let realDeadline = ContinuousClock.now + .seconds(60)
        var waited = 0.0
        while waited < seconds || ContinuousClock.now < realDeadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(2))
            if waited < seconds {
                time.advance(by: 0.01)
                waited += 0.01
            }
        }
        if try await condition() { return }
        throw InProcessFailure("\(what): not within \(seconds) s")
    }

    /// A front end subscribed to `topics`: the notifications it got so far, by topic.
    func subscriber(_ topics: [String]) async throws -> Subscriber {
        let front = RPCConnection(id: 2, peer: connection.peer, mayMutate: true)
        let lines = front.notificationLines()
        _ = try await dispatcher.call(Methods.eventsSubscribe, SubscribeParams(topics: topics), as: front)
        return Subscriber(connection: front, lines: lines)
    }
}

/// Notifications an in-process front end received, read as they come.
final class Subscriber: Sendable {
    private final class Received: Sendable {
        let notifications = Mutex<[(topic: String, params: JSONValue)]>([])
    }

    let connection: RPCConnection
    private let received = Received()
    private let reader: Task<Void, Never>

    init(connection: RPCConnection, lines: AsyncStream<[UInt8]>) {
        self.connection = connection
        let received = self.received
        reader = Task {
            for await line in lines {
                guard let message = try? JSONParser.parse(line), case .string(let topic) = message["method"] else { continue }
                received.notifications.withLock { $0.append((topic, message["params"] ?? .null)) }
            }
        }
    }

    deinit { reader.cancel() }

    func all<Payload>(_ event: Event<Payload>) -> [Payload] {
        received.notifications.withLock { $0 }.filter { $0.topic == event.topic }.compactMap { try? event.decode($0.params) }
    }
}

struct InProcessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
