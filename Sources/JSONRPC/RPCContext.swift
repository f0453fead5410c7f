import DriverAPI
import Synchronization

/// One client connection, as handlers see it: who called, and a place to hang things that must end with the
/// connection (subscriptions, rate requests).
public final class RPCConnection: Sendable {
    public let id: UInt64
    public let peer: PeerCredentials
    public let mayMutate: Bool
    private let closeHandlers = Mutex<[@Sendable () -> Void]?>([])

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

    /// Called by the server when the connection ends.
    public func closed() {
        let handlers = closeHandlers.withLock { handlers in
            defer { handlers = nil }
            return handlers ?? []
        }
        for handler in handlers { handler() }
    }
}
