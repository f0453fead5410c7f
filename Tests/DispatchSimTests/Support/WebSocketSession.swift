import BackendContract
import Foundation
import HTTPTypes
import Logging
import NIOCore
import WSClient

/// A rider WebSocket for a test: `body` sends frames and reads the next ones; everything ends within
/// `seconds`.
enum WebSocketSession {
    struct Reader {
        var iterator: WebSocketInboundMessageStream.AsyncIterator

        mutating func next() async throws -> WSServerMessage {
            guard let message = try await iterator.next() else { throw HarnessError("the WebSocket closed") }
            guard case .text(let text) = message else { throw HarnessError("a binary frame") }
            return try JSONDecoder().decode(WSServerMessage.self, from: Data(text.utf8))
        }

        /// nil once the server closed the connection.
        mutating func nextOrClose() async throws -> WSServerMessage? {
            guard let message = try await iterator.next() else { return nil }
            guard case .text(let text) = message else { throw HarnessError("a binary frame") }
            return try JSONDecoder().decode(WSServerMessage.self, from: Data(text.utf8))
        }
    }

    static func send(_ message: WSClientMessage, _ outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.text(String(decoding: JSONEncoder().encode(message), as: UTF8.self)))
    }

    @discardableResult
    static func run(
        port: Int, token: String, path: String = BackendPaths.webSocket, seconds: Double = 20,
        _ body: @escaping @Sendable (inout Reader, WebSocketOutboundWriter) async throws -> Void
    ) async throws -> WebSocketCloseFrame? {
        var logger = Logger(label: "ws-test")
        logger.logLevel = .warning
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        configuration.additionalHeaders = [.authorization: "Bearer \(token)"]
        let setup = (configuration, logger)
        return try await withThrowingTaskGroup(of: WebSocketCloseFrame?.self) { group in
            group.addTask {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)\(path)", configuration: setup.0, logger: setup.1
                ) { inbound, outbound, _ in
                    var reader = Reader(iterator: inbound.messages(maxSize: 1 << 20).makeAsyncIterator())
                    try await body(&reader, outbound)
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                throw HarnessError("the WebSocket test took over \(seconds) s")
            }
            let result = try await group.next() ?? nil
            group.cancelAll()
            return result
        }
    }
}
