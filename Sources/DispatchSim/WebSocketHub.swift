import Synchronization

/// The open rider WebSockets, by driver: pushes go to every connection of their driver; the fault injector
/// can close them all. Lock-guarded; nothing is written while the lock is held (frames go through each
/// connection's stream to its writer task).
final class WebSocketHub: Sendable {
    enum Outbound: Sendable {
        case text(String)
        case close
    }

    struct Connection: Sendable {
        var driverId: String
        var continuation: AsyncStream<Outbound>.Continuation
    }

    private let connections = Mutex<[Int: Connection]>([:])
    private let nextID = Atomic<Int>(1)

    func register(driverId: String, continuation: AsyncStream<Outbound>.Continuation) -> Int {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        connections.withLock { $0[id] = Connection(driverId: driverId, continuation: continuation) }
        return id
    }

    func unregister(_ id: Int) {
        _ = connections.withLock { $0.removeValue(forKey: id) }
    }

    func send(_ text: String, toDriver driverId: String) {
        let targets = connections.withLock { $0.values.filter { $0.driverId == driverId }.map(\.continuation) }
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
