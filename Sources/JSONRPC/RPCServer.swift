#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Where the server listens.
public enum RPCListener: Sendable {
    /// Bind a socket file at this path (a stale file is replaced; a live socket is never stolen).
    case path(String, mode: mode_t, groupID: UInt32?)
    /// Use a socket that is already bound and listening (systemd socket activation).
    case inherited(descriptor: Int32)
}

public struct RPCServerConfiguration: Sendable {
    /// Longest accepted line; a longer one is answered with an error and the connection closed.
    public var maxLineBytes: Int
    /// Connections beyond this are answered with an error and closed at once.
    public var maxConnections: Int

    public init(maxLineBytes: Int = 1 << 20, maxConnections: Int = 1024) {
        self.maxLineBytes = maxLineBytes
        self.maxConnections = maxConnections
    }
}

/// The JSON-RPC 2.0 server on a Unix socket: one task per connection, lines handled in order per connection,
/// so one stalled or slow client never holds up another.
public final class RPCServer: Sendable {
    private let dispatcher: RPCDispatcher
    private let policy: PeerAccessPolicy
    private let configuration: RPCServerConfiguration
    private let logger: Logger
    private let group: any EventLoopGroup
    private let counters: RPCCounters
    private let nextConnectionID = Atomic<UInt64>(1)

    public init(
        dispatcher: RPCDispatcher, policy: PeerAccessPolicy, counters: RPCCounters,
        configuration: RPCServerConfiguration = .init(), logger: Logger,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.dispatcher = dispatcher
        self.policy = policy
        self.counters = counters
        self.configuration = configuration
        self.logger = logger
        self.group = group
    }

    private typealias Connection = (channel: NIOAsyncChannel<LineFrame, ByteBuffer>, peer: PeerCredentials, notifications: NotificationWriter)

    /// Listens until the calling task is cancelled. `onListening` runs once the socket accepts connections.
    public func run(listener: RPCListener, onListening: @Sendable () -> Void = {}) async throws {
        let serverChannel = try await bind(listener)
        onListening()
        defer {
            if case .path(let path, _, _) = listener { UnixSocketPath.remove(path) }
        }
        try await withThrowingDiscardingTaskGroup { tasks in
            try await serverChannel.executeThenClose { inbound in
                for try await connection in inbound {
                    tasks.addTask { await self.serve(connection) }
                }
            }
        }
    }

    private func bind(_ listener: RPCListener) async throws -> NIOAsyncChannel<Connection, Never> {
        let maxLine = configuration.maxLineBytes
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Connection> = { channel in
            Self.peerCredentials(of: channel).flatMapThrowing { peer in
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLength: maxLine)))
                let notifications = NotificationWriter(channel: channel)
                try channel.pipeline.syncOperations.addHandler(NotificationDrainHandler(writer: notifications))
                // Deinit-based teardown on purpose: a client that connects while the server shuts down is
                // accepted but never served, and its wrapper must then close itself rather than trap.
                let asyncChannel = try NIOAsyncChannel<LineFrame, ByteBuffer>(synchronouslyWrapping: channel)
                return (asyncChannel, peer, notifications)
            }
        }
        switch listener {
        case .path(let path, let mode, let groupID):
            // Bind under a scratch name, set mode and group, then rename into place: no client ever sees the
            // socket with the default permissions.
            try UnixSocketPath.prepare(path)
            let scratch = path + ".new"
            UnixSocketPath.remove(scratch)
            let channel = try await bootstrap.bind(unixDomainSocketPath: scratch, childChannelInitializer: initializer)
            do {
                try UnixSocketPath.applyPermissions(path: scratch, mode: mode, groupID: groupID)
                try UnixSocketPath.rename(scratch, to: path)
            } catch {
                // The setup's error is the one to report; a close that fails too adds nothing to it.
                try? await channel.channel.close()
                UnixSocketPath.remove(scratch)
                throw error
            }
            return channel
        case .inherited(let descriptor):
            return try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
        }
    }

    /// `SO_PEERCRED` for who connected, `SO_PEERGROUPS` for their supplementary groups (the hardened unit hides
    /// other users' /proc entries, so the socket is the only reliable source).
    private static func peerCredentials(of channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeSucceededFuture(PeerCredentials(pid: 0, uid: .max, gid: .max, supplementaryGroups: []))
        }
        let credentials: EventLoopFuture<PeerCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.flatMap { cred in
            let groups: EventLoopFuture<PeerGroups> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(PeerGroups.option))
            return groups.map { $0.list }.recover { _ in
                // More groups than fit: read them from /proc instead.
                PeerCredentials.supplementaryGroups(ofProcess: cred.pid)
            }.map { list in
                PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid, supplementaryGroups: list)
            }
        }
    }

    private func serve(_ connection: Connection) async {
        let id = nextConnectionID.add(1, ordering: .relaxed).oldValue
        let count = counters.connectionOpened()
        let handle = RPCConnection(id: id, peer: connection.peer, mayMutate: policy.mayMutate(connection.peer))
        defer {
            counters.connectionClosed()
            handle.closed()
        }
        // Notifications (subscriptions) are written by their publishers, beside the replies, whole lines each.
        handle.attach(.channel(connection.notifications))
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                if count > configuration.maxConnections {
                    let error = WireError(.unavailable, "too many connections (limit \(configuration.maxConnections))")
                    try await outbound.write(Self.line(Envelope.error(id: .null, error)))
                    return
                }
                for try await frame in inbound {
                    switch frame {
                    case .line(let buffer):
                        if buffer.readableBytesView.allSatisfy(Self.isWhitespace) { continue }
                        let parsed = buffer.withUnsafeReadableBytes { RPCDispatcher.parse(line: $0) }
                        connection.notifications.hold()
                        defer { connection.notifications.release() }
                        let reply = await dispatcher.handle(parsed: parsed, connection: handle)
                        if let reply { try await outbound.write(Self.line(reply)) }
                    case .oversized(let limit):
                        let error = WireError(.invalidRequest, "invalid request: line longer than \(limit) bytes; closing")
                        try await outbound.write(Self.line(Envelope.error(id: .null, error)))
                        logger.warning("closed a connection that sent an oversized line", metadata: ["peer": "\(connection.peer)"])
                        return
                    }
                }
            }
        } catch {
            logger.debug("connection ended", metadata: ["error": "\(error)"])
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }

    private static func line(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(line: bytes) }
}

/// `struct ucred` from <sys/socket.h> (Glibc hides it behind _GNU_SOURCE), laid out the same.
private struct PeerCred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Room for 64 supplementary groups, the buffer `SO_PEERGROUPS` fills.
private struct PeerGroups: Sendable {
    static let option: Int32 = 59  // SO_PEERGROUPS, Linux 4.13+
    var storage: (
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64
    ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// NIO zero-fills the buffer and does not report the length written, so trailing zeros are padding. A real
    /// gid 0 is lost with them; the access policy never relies on supplementary gid 0.
    var list: [UInt32] {
        withUnsafeBytes(of: storage) { Array($0.bindMemory(to: UInt32.self)) }.filter { $0 != 0 }
    }
}
