import NIOCore
import NIOHTTP1

/// Type metadata the Swift runtime must build once, on one thread, before any event loop connects or accepts.
///
/// Swift 6.3.1's runtime can crash (a null pointer in `swift_conformsToProtocolMaybeInstantiateSuperclasses`, under
/// `swift_getTypeByMangledName`) when two threads build the metadata of NIO's HTTP decoder handler for the first time
/// at once. A client builds `ByteToMessageHandler<HTTPResponseDecoder>` on each connection: driverd's HTTP client
/// (async-http-client) and its WebSocket upgrade (swift-websocket) do, on its two event loops, right after a start.
/// A server builds `ByteToMessageHandler<HTTPRequestDecoder>` for each connection it accepts: the kiosk's page opens
/// several at once. `metadata-race` reproduces it: 1 to 4 % of processes whose two threads race crash, none once
/// this has run first (docs/DURABILITY.md, "The SIGSEGV"). The soak's SIGSEGVs (seeds 202 and 29) crashed there.
public enum RuntimeMetadata {
    /// An HTTP client's handlers. Call on the main thread before anything connects.
    public static func instantiateHTTPClientTypes() {
        withExtendedLifetime(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes))) {}
    }

    /// An HTTP server's handlers. Call on the main thread before the server accepts.
    public static func instantiateHTTPServerTypes() {
        withExtendedLifetime(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes))) {}
    }
}
