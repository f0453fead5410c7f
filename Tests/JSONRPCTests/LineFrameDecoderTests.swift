import JSONRPC
import NIOCore
import NIOEmbedded
import Testing

@Suite("Line framing")
struct LineFrameDecoderTests {
    func frames(_ chunks: [String], limit: Int = 16, close: Bool = false) throws -> [LineFrame] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maxLength: limit)))
        for chunk in chunks { try channel.writeInbound(ByteBuffer(string: chunk)) }
        if close { _ = try? channel.finish() }
        var out: [LineFrame] = []
        while let frame = try channel.readInbound(as: LineFrame.self) { out.append(frame) }
        return out
    }

    @Test func splitsAcrossChunks() throws {
        #expect(try frames(["ab", "c\nde", "f\r\n\n"]) == [.line(ByteBuffer(string: "abc")), .line(ByteBuffer(string: "def")), .line(ByteBuffer(string: ""))])
    }

    @Test func oversizedWithoutNewlineStopsBuffering() throws {
        #expect(try frames([String(repeating: "x", count: 10), String(repeating: "x", count: 10)]) == [.oversized(limit: 16)])
    }

    @Test func oversizedWithNewline() throws {
        #expect(try frames(["ok\n" + String(repeating: "x", count: 17) + "\nlater\n"]) == [.line(ByteBuffer(string: "ok")), .oversized(limit: 16)])
    }

    @Test func exactlyAtTheLimitIsFine() throws {
        #expect(try frames([String(repeating: "y", count: 16) + "\n"]) == [.line(ByteBuffer(string: String(repeating: "y", count: 16)))])
    }

    @Test func lastLineWithoutNewlineAtEOF() throws {
        #expect(try frames(["a\nb"], close: true) == [.line(ByteBuffer(string: "a")), .line(ByteBuffer(string: "b"))])
    }
}
