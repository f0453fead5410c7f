import ArgumentParser
import JSONRPC
import NIOCore
import NIOPosix

/// The baseline for the RPC benchmark: the same NIO line framing on a Unix socket, echoing each line back
/// with no JSON-RPC work at all.
struct EchoServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "echo-server", abstract: "Serve a raw line echo (the RPC baseline).")

    @Option var socket: String

    func run() async throws {
        try UnixSocketPath.prepare(socket)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .bind(unixDomainSocketPath: socket) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLength: 1 << 20)))
                    return try NIOAsyncChannel<LineFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { inbound in
                for try await connection in inbound {
                    group.addTask {
                        // A client that goes mid-line ends its own connection only.
                        try? await connection.executeThenClose { input, output in
                            for try await frame in input {
                                guard case .line(var line) = frame else { return }
                                line.writeInteger(UInt8(ascii: "\n"))
                                try await output.write(line)
                            }
                        }
                    }
                }
            }
        }
    }
}
