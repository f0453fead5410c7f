import NIOCore

extension ByteBuffer {
    /// One line of the wire: the bytes and their newline.
    public init(line bytes: [UInt8]) {
        self.init()
        reserveCapacity(bytes.count + 1)
        writeBytes(bytes)
        writeInteger(UInt8(ascii: "\n"))
    }
}

/// What the line decoder hands on: a complete line, or the news that a line grew past the limit.
public enum LineFrame: Sendable, Equatable {
    case line(ByteBuffer)
    case oversized(limit: Int)
}

/// Splits newline-delimited text into lines of at most `maxLength` bytes.
///
/// It remembers how far it has scanned, so a slow sender dribbling a long line costs linear time, and it
/// stops buffering the moment a line passes the limit.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = LineFrame

    public let maxLength: Int
    private var scanned = 0
    private var overflowed = false

    public init(maxLength: Int) { self.maxLength = maxLength }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if overflowed {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        let searchStart = view.index(view.startIndex, offsetBy: scanned)
        guard let newline = view[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            if scanned > maxLength {
                overflowed = true
                buffer.moveReaderIndex(to: buffer.writerIndex)
                context.fireChannelRead(wrapInboundOut(.oversized(limit: maxLength)))
            }
            return .needMoreData
        }
        let length = newline - view.startIndex
        scanned = 0
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if length > maxLength {
            overflowed = true
            context.fireChannelRead(wrapInboundOut(.oversized(limit: maxLength)))
            return .needMoreData
        }
        if line.readableBytesView.last == UInt8(ascii: "\r") { line.moveWriterIndex(to: line.writerIndex - 1) }
        context.fireChannelRead(wrapInboundOut(.line(line)))
        return .continue
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // A last line without its newline (a client that half-closes after writing) still counts.
        if !overflowed, buffer.readableBytes > 0, let line = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(.line(line)))
        }
        return .needMoreData
    }
}
