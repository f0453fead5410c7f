import DriverAPI
import FoundationEssentials
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// The kiosk's HTTP side: the page's files, and `/rpc`, the WebSocket bridged to driverd for pages that hold
/// the token and come from the kiosk's own origin.
public enum KioskServer {
    public static func makeApplication(
        _ configuration: KioskConfiguration, access: @escaping @Sendable () -> KioskAccess?, bridge: KioskBridge, language: KioskLanguage,
        tiles: MBTiles?, logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.middlewares.add(SecurityHeaders(tiles: configuration.tiles))
        /// The page's own requests: its token, from its own origin; `what` names a refusal in the journal.
        @Sendable func admit(_ request: Request, _ what: String) throws {
            guard let access = access() else { throw HTTPError(.serviceUnavailable, message: "starting") }
            if let refusal = access.check(token: request.uri.queryParameters["token"].map(String.init), origin: request.headers[.origin]) {
                logger.notice("refused \(what): \(refusal)")
                throw HTTPError(.forbidden, message: "\(refusal)")
            }
        }
        router.ws("/rpc") { request, _ in
            try admit(request, "a WebSocket")
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, _ in
            await bridge.run(inbound: inbound, outbound: outbound)
        }
        // The screen's language, for the voice: the same token and origin as the WebSocket.
        router.put("/language") { request, _ -> HTTPResponse.Status in
            try admit(request, "a language change")
            let code = request.uri.queryParameters["code"].map(String.init) ?? ""
            guard language.set(code) else {
                throw HTTPError(.badRequest, message: "code: one of \(language.available.sorted().joined(separator: ", "))")
            }
            return .noContent
        }
        // The languages there are catalogs for, and one language's texts already layered (region over language over
        // English): no secret, like the page's files. The page names each language in its own words itself (Intl).
        router.get("/languages") { _, _ -> Response in
            try jsonResponse(["languages": language.codes])
        }
        router.get("/catalog") { request, _ -> Response in
            let code = request.uri.queryParameters["code"].map(String.init) ?? ""
            guard let tag = LanguageTag(code), language.available.contains(tag.language) else {
                throw HTTPError(.notFound, message: "code: one of \(language.codes.joined(separator: ", "))")
            }
            do {
                return try jsonResponse(try language.catalog(tag))
            } catch let error as KioskCatalogError {
                logger.error("catalog for \(tag) not served: \(error)")
                throw HTTPError(.internalServerError, message: "the kiosk's catalog for \(tag) is broken")
            }
        }
        if let tiles {
            // Tiles are no secret (the page's files are served the same way); a missing one is a 404 the map skips.
            router.get(RouterPath(MBTiles.route)) { _, context -> Response in
                guard let z = context.parameters.get("z", as: Int.self), let x = context.parameters.get("x", as: Int.self),
                      let y = context.parameters.get("y", as: Int.self)
                else { throw HTTPError(.notFound) }
                let found: [UInt8]?
                do {
                    found = try tiles.tile(z: z, x: x, y: y)
                } catch {
                    logger.error("map tile \(z)/\(x)/\(y) cannot be read: \(error)")
                    throw HTTPError(.internalServerError)
                }
                guard let bytes = found else { throw HTTPError(.notFound) }
                return Response(
                    status: .ok, headers: [.contentType: tiles.contentType, .cacheControl: "max-age=86400"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }
        router.middlewares.add(FileMiddleware(configuration.www, searchForIndexHtml: true, logger: logger))
        return Application(
            router: router,
            server: .http1WebSocketUpgrade(
                webSocketRouter: router, configuration: .init(ws: .init(maxFrameSize: BridgePolicy.maxFrameBytes))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "driverd-kiosk"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }
}

/// A JSON answer the page reads again at each load (a package update may bring new catalogs).
private func jsonResponse<Value: Encodable>(_ value: Value) throws -> Response {
    Response(
        status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-cache"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: try Codec.encode(value))))
}

/// The page loads nothing from elsewhere but map tiles, never sends the token in a `Referer`, and cannot be
/// framed by another page.
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    let policy: String

    init(tiles: String) {
        let tileOrigin = Self.origin(of: tiles)
        policy = "default-src 'self'; img-src 'self' data: blob:\(tileOrigin.map { " \($0)" } ?? ""); connect-src 'self'; "
            + "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    }

    /// `https://tiles.example` of `https://tiles.example/{z}/{x}/{y}.png`.
    static func origin(of template: String) -> String? {
        guard let scheme = template.firstRange(of: "://") else { return nil }
        let rest = template[scheme.upperBound...]
        let host = rest.prefix { $0 != "/" }
        return host.isEmpty ? nil : String(template[..<scheme.upperBound]) + host
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = policy
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[.xContentTypeOptions] = "nosniff"
        // The page is small and changes with the package: always revalidated.
        response.headers[.cacheControl] = "no-cache"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return response
    }
}
