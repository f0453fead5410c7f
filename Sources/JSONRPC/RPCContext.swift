import DriverAPI
import Synchronization

/// One client connection, as handlers see it: who called, and a place to hang things that must end with the
/// connection (subscriptions, rate requests).
public final class RPCConnection: Sendable {
    public let id: UInt64
    public let peer: PeerCredentials
    public let mayMutate: Bool
    private let closeHandlers = Mutex<[@Sendable () -> Void]?>([])
    private let notifications = Mutex<NotificationSink?>(nil)

    /// Where notifications go: the socket's writer, or a stream an in-process front end reads.
    enum NotificationSink: Sendable {
        case channel(NotificationWriter)
        case stream(AsyncStream<[UInt8]>.Continuation)
    }

    public init(id: UInt64, peer: PeerCredentials, mayMutate: Bool) {
        self.id = id
        self.peer = peer
        self.mayMutate = mayMutate
    }

    /// Runs `handler` once when the connection closes (at once if it already has).
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let runNow = closeHandlers.withLock { handlers -> Bool in
            guard handlers != nil else { return true }
            handlers!.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Queues a server-to-client notification (`Envelope.notification`). A client that does not read keeps
    /// only the newest ones: a slow front end never makes the daemon buffer without bound.
    public func notify(_ line: [UInt8]) {
        switch notifications.withLock({ $0 }) {
        case .channel(let writer): writer.send(line)
        case .stream(let continuation): continuation.yield(line)
        case nil: break
        }
    }

    /// Called by the server (or `notificationLines()`): where notifications go.
    func attach(_ sink: NotificationSink) {
        notifications.withLock { $0 = sink }
    }

    /// Called by the server when the connection ends.
    public func closed() {
        let sink = notifications.withLock { sink in
            defer { sink = nil }
            return sink
        }
        switch sink {
        case .channel(let writer): writer.close()
        case .stream(let continuation): continuation.finish()
        case nil: break
        }
        let handlers = closeHandlers.withLock { handlers in
            defer { handlers = nil }
            return handlers ?? []
        }
        for handler in handlers { handler() }
    }
}
