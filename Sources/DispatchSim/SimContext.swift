import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of the reference backend: the channel (fault injection closes it), the driver the
/// Bearer token names, and JSON coding with sorted keys, so a replayed answer is byte for byte the first one.
struct SimContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<SimContext>
    let channel: any Channel
    /// Set by `BearerAuthMiddleware`.
    var driverId: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }

    /// Photos are up to 8 MiB; the multipart envelope adds a little.
    var maxUploadSize: Int { PhotoLimits.maxRequestBytes }

    var requestDecoder: JSONDecoder { JSONDecoder() }
    var responseEncoder: JSONEncoder { SimJSON.encoder }

    func requireDriver() throws -> String {
        guard let driverId else { throw SimHTTPError(.unauthorized, "a Bearer token is required") }
        return driverId
    }
}
