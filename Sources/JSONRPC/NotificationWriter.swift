import NIOCore
import Synchronization

/// Writes a connection's notifications to its channel as they are published, in the order they are, without a
/// task in between: a task that wrote them (it was an `AsyncStream` and the channel's async writer) ran only when
/// the publisher's event loop was done with what it was doing, so a backend's ack reached the driver's screen up to
/// 120 µs after it was published.
///
/// Lines wait in a queue kept in publishing order; whoever finds the queue unwritten writes it on the channel's event
/// loop, at once when it publishes from that loop. A client that does not read makes the channel unwritable (NIO's
/// high-water mark): its queue then keeps only the newest `limit` lines and goes out when the client reads again, so
/// a slow front end never makes the daemon buffer without bound and still ends with the latest state. While one
/// of the connection's own requests is handled its notifications wait for the reply (`hold`): a subscription's
/// replay follows the subscription's answer.
final class NotificationWriter: Sendable {
    private struct State {
        var lines: [[UInt8]] = []
        var dropped = 0
        var drainScheduled = false
        var holds = 0
        var closed = false
    }

    private let channel: any Channel
    private let limit: Int
    private let state = Mutex(State())

    init(channel: any Channel, limit: Int = 256) {
        self.channel = channel
        self.limit = limit
    }

    /// Lines dropped so far because the client did not read.
    var dropped: Int { state.withLock { $0.dropped } }

    func send(_ line: [UInt8]) {
        let onLoop = channel.eventLoop.inEventLoop
        let schedule = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.lines.append(line)
            if state.lines.count > limit {
                state.dropped += state.lines.count - limit
                state.lines.removeFirst(state.lines.count - limit)
            }
            guard state.holds == 0, !onLoop, !state.drainScheduled else { return false }
            state.drainScheduled = true
            return true
        }
        if onLoop {
            drain()
        } else if schedule {
            channel.eventLoop.execute { self.drain() }
        }
    }

    /// Writes what waits while the channel takes it (on its event loop; again when it becomes writable, or a reply
    /// was written).
    func drain() {
        channel.eventLoop.assertInEventLoop()
        var wrote = false
        while true {
            let line = state.withLock { state -> [UInt8]? in
                guard state.holds == 0, channel.isWritable, !state.lines.isEmpty else {
                    state.drainScheduled = false
                    return nil
                }
                return state.lines.removeFirst()
            }
            guard let line else { break }
            channel.write(ByteBuffer(line: line), promise: nil)
            wrote = true
        }
        if wrote { channel.flush() }
    }

    /// A request of the connection is being handled: its notifications wait for `release`.
    func hold() { state.withLock { $0.holds += 1 } }

    /// The request's reply was written: what waited goes out after it.
    func release() {
        // Most requests publish nothing to their own connection: no hop to the channel's loop for them.
        let waiting = state.withLock { state -> Bool in
            state.holds -= 1
            return state.holds == 0 && !state.lines.isEmpty
        }
        guard waiting else { return }
        if channel.eventLoop.inEventLoop { drain() } else { channel.eventLoop.execute { self.drain() } }
    }

    func close() {
        state.withLock { state in
            state.closed = true
            state.lines = []
        }
    }
}

/// Drains a connection's `NotificationWriter` when its channel becomes writable again.
final class NotificationDrainHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny
    private let writer: NotificationWriter

    init(writer: NotificationWriter) { self.writer = writer }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { writer.drain() }
        context.fireChannelWritabilityChanged()
    }
}
