import JSONRPC
import Synchronization

/// Who subscribed to which topic. Publishing encodes once and queues the line on each subscriber's connection.
final class EventHub: Sendable {
    private let subscribers = Mutex<[String: [UInt64: RPCConnection]]>([:])
    private let onSubscribe = Mutex<(@Sendable (RPCConnection, [String]) -> Void)?>(nil)

    /// Called after each subscription (pushes waiting for acknowledgement go to a new subscriber).
    func whenSubscribed(_ action: @escaping @Sendable (RPCConnection, [String]) -> Void) { onSubscribe.withLock { $0 = action } }

    /// Subscribes `connection`; the subscription ends with the connection. Returns its topics.
    func subscribe(_ connection: RPCConnection, to topics: [String]) -> [String] {
        let added = subscribers.withLock { table -> Bool in
            let isNew = !table.values.contains { $0[connection.id] != nil }
            for topic in topics { table[topic, default: [:]][connection.id] = connection }
            return isNew
        }
        if added {
            connection.onClose { [weak self] in
                self?.subscribers.withLock { table in
                    for topic in table.keys { table[topic]![connection.id] = nil }
                }
            }
        }
        onSubscribe.withLock { $0 }?(connection, topics)
        return subscribers.withLock { table in table.filter { $0.value[connection.id] != nil }.keys.sorted() }
    }

    /// One notification to one connection.
    func send(_ topic: String, params: [UInt8], to connection: RPCConnection) {
        connection.notify(Envelope.notification(method: topic, params: params))
    }

    func hasSubscribers(_ topic: String) -> Bool { subscribers.withLock { !($0[topic]?.isEmpty ?? true) } }

    func publish(_ topic: String, params: [UInt8]) {
        let targets = subscribers.withLock { Array(($0[topic] ?? [:]).values) }
        guard !targets.isEmpty else { return }
        let line = Envelope.notification(method: topic, params: params)
        for connection in targets { connection.notify(line) }
    }
}
