import Synchronization

/// Live counters of the server, for `agent.status` and the systemd status line.
public final class RPCCounters: Sendable {
    private let open = Atomic<Int>(0)
    private let served = Atomic<Int>(0)

    public init() {}

    public var openConnections: Int { open.load(ordering: .relaxed) }
    /// Requests and notifications handled so far (each batch element counts one).
    public var requestsServed: Int { served.load(ordering: .relaxed) }

    /// Returns the number of open connections including this one.
    func connectionOpened() -> Int { open.add(1, ordering: .relaxed).newValue }
    func connectionClosed() { open.subtract(1, ordering: .relaxed) }
    func requestServed() { served.add(1, ordering: .relaxed) }
}
