import Logging
import NIOCore
import NIOPosix

/// A mobile carrier's NAT in front of the backend (`--nat-idle-seconds`): a TCP relay that forgets a connection's
/// mapping once no byte went either way for `idleTimeout`, as carriers' NATs do (their timeouts vary from minutes
/// to hours). A forgotten mapping is silent, as on a real network: what the backend sends afterwards is lost, and
/// the unit's next packet is answered with a reset (it reaches the backend through a new mapping, as a segment of
/// no connection the backend knows). So a unit whose keepalive is longer than the NAT's timeout misses pushes until
/// it next sends, and one whose keepalive is shorter never does.
enum CarrierNAT {
    /// Listens on `host:port` and relays each connection to `backendPort` on loopback; returns the bound port.
    static func start(host: String, port: Int, backendPort: Int, idleTimeout: TimeAmount, logger: Logger) async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { unit in
                // The backend's side on the unit's event loop: both halves of a mapping share one thread, no lock. The
                // initializer runs before the unit's channel is registered, so no byte arrives before its handler.
                ClientBootstrap(group: unit.eventLoop).connect(host: "127.0.0.1", port: backendPort).flatMap { backend in
                    let mapping = Mapping(unit: unit, backend: backend, idleTimeout: idleTimeout, logger: logger)
                    return unit.pipeline.addHandler(Mapping.Side(mapping, isUnit: true)).flatMap {
                        backend.pipeline.addHandler(Mapping.Side(mapping, isUnit: false))
                    }.map { mapping.start() }
                }
            }
            .bind(host: host, port: port).get()
        return channel.localAddress?.port ?? port
    }

    /// One connection's mapping; touched only on its event loop.
    final class Mapping: @unchecked Sendable {
        let unit: Channel
        let backend: Channel
        let idleTimeout: TimeAmount
        let logger: Logger
        var lastByte = NIODeadline.now()
        var forgotten = false
        var check: Scheduled<Void>?

        init(unit: Channel, backend: Channel, idleTimeout: TimeAmount, logger: Logger) {
            self.unit = unit
            self.backend = backend
            self.idleTimeout = idleTimeout
            self.logger = logger
        }

        func start() { schedule(in: idleTimeout) }

        private func schedule(in delay: TimeAmount) {
            check = unit.eventLoop.scheduleTask(in: delay) { [self] in
                let quiet = NIODeadline.now() - lastByte
                guard quiet >= idleTimeout else { return schedule(in: idleTimeout - quiet) }
                forgotten = true
                logger.info("carrier NAT: a connection idle for \(idleTimeout.nanoseconds / 1_000_000_000) s is forgotten")
            }
        }

        /// Bytes from one side: relayed while the mapping lives. After it is forgotten the backend's bytes vanish, and
        /// the unit's first bytes get a reset while the backend's connection is closed.
        func received(_ buffer: ByteBuffer, fromUnit: Bool) {
            guard !forgotten else {
                if fromUnit { reset() }
                return
            }
            lastByte = .now()
            (fromUnit ? backend : unit).writeAndFlush(buffer, promise: nil)
        }

        /// One side closed: the other follows (a forgotten mapping's unit side stays, as it cannot know).
        func closed(unitSide: Bool) {
            check?.cancel()
            if unitSide || !forgotten {
                unit.close(promise: nil)
                backend.close(promise: nil)
            }
        }

        private func reset() {
            check?.cancel()
            // SO_LINGER 0: close sends a reset, what a segment of an unknown connection gets.
            guard let options = unit as? any SocketOptionProvider else {
                unit.close(promise: nil)
                backend.close(promise: nil)
                return
            }
            options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in self.unit.close(promise: nil) }
            backend.close(promise: nil)
        }

        final class Side: ChannelInboundHandler, @unchecked Sendable {
            typealias InboundIn = ByteBuffer
            let mapping: Mapping
            let isUnit: Bool

            init(_ mapping: Mapping, isUnit: Bool) {
                self.mapping = mapping
                self.isUnit = isUnit
            }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                mapping.received(unwrapInboundIn(data), fromUnit: isUnit)
            }

            func channelInactive(context: ChannelHandlerContext) {
                mapping.closed(unitSide: isUnit)
            }

            func errorCaught(context: ChannelHandlerContext, error: any Error) {
                context.close(promise: nil)
            }
        }
    }
}
