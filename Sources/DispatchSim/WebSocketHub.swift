import Synchronization

/// The open rider WebSockets, by driver: pushes go to every live connection of their driver (live once its
/// `hello` was answered, so a new push never overtakes the catch-up); the fault injector can close them all. Lock-guarded; nothing is written while the lock is held (frames go through each
/// connection's stream to its writer task).
final class WebSocketHub: Sendable {
    enum Outbound: Sendable {
        case text(String)
        case close
    }

    struct Connection: Sendable {
        var driverId: String
        var continuation: AsyncStream<Outbound>.Continuation
        var live = false
    }

    private let connections = Mutex<[Int: Connection]>([:])
    private let nextID = Atomic<Int>(1)

    func register(driverId: String, continuation: AsyncStream<Outbound>.Continuation) -> Int {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        connections.withLock { $0[id] = Connection(driverId: driverId, continuation: continuation) }
        return id
    }

    /// The connection's catch-up is sent: new pushes go to it from now on.
    func goLive(_ id: Int) {
        connections.withLock { $0[id]?.live = true }
    }

    func unregister(_ id: Int) {
        _ = connections.withLock { $0.removeValue(forKey: id) }
    }

    func send(_ text: String, toDriver driverId: String) {
        let targets = connections.withLock { $0.values.filter { $0.driverId == driverId && $0.live }.map(\.continuation) }
        for continuation in targets { continuation.yield(.text(text)) }
    }

    func send(_ text: String, toConnection id: Int) {
        connections.withLock { $0[id]?.continuation }?.yield(.text(text))
    }

    /// Closes every open WebSocket; returns how many.
    func closeAll() -> Int {
        let all = connections.withLock { Array($0.values) }
        for connection in all { connection.continuation.yield(.close) }
        return all.count
    }

    var count: Int { connections.withLock { $0.count } }
}
