@testable import JSONRPC
import NIOCore
import NIOEmbedded
import Testing

@Suite("Notification writer")
struct NotificationWriterTests {
    func written(_ channel: EmbeddedChannel) throws -> [String] {
        var lines: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { lines.append(String(buffer: buffer)) }
        return lines
    }

    @Test("lines go out as they are published, whole and in order")
    func inOrder() throws {
        let channel = EmbeddedChannel()
        let writer = NotificationWriter(channel: channel)
        for line in ["a", "b", "c"] { writer.send(Array(line.utf8)) }
        #expect(try written(channel) == ["a\n", "b\n", "c\n"])
    }

    @Test("while one of the connection's requests is handled, its notifications wait for the reply")
    func heldForReply() throws {
        let channel = EmbeddedChannel()
        let writer = NotificationWriter(channel: channel)
        writer.hold()
        writer.send(Array("replayed".utf8))
        #expect(try written(channel).isEmpty)
        channel.writeAndFlush(ByteBuffer(string: "reply\n"), promise: nil)
        writer.release()
        #expect(try written(channel) == ["reply\n", "replayed\n"])
        writer.send(Array("later".utf8))
        #expect(try written(channel) == ["later\n"])
    }

    @Test("a client that does not read: only the newest lines wait, and they go out in order once it reads again")
    func slowClient() throws {
        let channel = EmbeddedChannel()
        let writer = NotificationWriter(channel: channel, limit: 256)
        try channel.pipeline.syncOperations.addHandler(NotificationDrainHandler(writer: writer))
        channel.isWritable = false
        for index in 0..<300 { writer.send(Array("\(index)".utf8)) }
        #expect(try written(channel).isEmpty)
        #expect(writer.dropped == 44)
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(try written(channel) == (44..<300).map { "\($0)\n" })
        // Closed: nothing more is queued or written.
        writer.close()
        writer.send(Array("late".utf8))
        #expect(try written(channel).isEmpty)
    }
}
