import JSONRPC
import NIOCore
import NIOPosix

/// One connection to driverd's JSON-RPC socket, as lines in and lines out.
public enum DaemonLink {
    public typealias Channel = NIOAsyncChannel<LineFrame, ByteBuffer>

    /// driverd's notifications can be long (a whole route): the kiosk takes lines up to 16 MiB.
    static let maxLineBytes = 16 << 20

    public static func connect(_ path: String) async throws -> Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLength: maxLineBytes)))
                    return try Channel(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// A line with its newline, ready to write.
    public static func line(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(line: bytes) }
}
