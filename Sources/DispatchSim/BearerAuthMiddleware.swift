import BackendContract
import Hummingbird

/// Checks the Bearer access token of every rider request and puts its driver into the context.
struct BearerAuthMiddleware: RouterMiddleware {
    typealias Context = SimContext
    let tokens: TokenIssuer
    let state: SimState

    func handle(_ request: Request, context: SimContext, next: (Request, SimContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw Self.unauthorized(.unauthorized, "a Bearer token is required")
        }
        let claims: TokenIssuer.Claims
        var expired = false
        switch tokens.verify(String(header.dropFirst("Bearer ".count)), kind: .access, now: SimState.now()) {
        case .success(let verified): claims = verified
        case .failure(.expired(let stale)): (claims, expired) = (stale, true)
        case .failure: throw Self.unauthorized(.unauthorized, "the access token is not valid")
        }
        // Revoked before expired, whatever the token's age: refreshing a revoked token fails too, so the client must
        // hear that it has to log in again.
        let current = await state.read { world, _ in world.driver(id: claims.sub) != nil ? world.tokenGeneration(driverId: claims.sub) : nil }
        guard current == claims.gen else { throw Self.unauthorized(.unauthorized, "the access token was revoked") }
        guard !expired else { throw Self.unauthorized(.tokenExpired, "the access token has expired; refresh it") }
        var context = context
        context.driverId = claims.sub
        return try await next(request, context)
    }

    static func unauthorized(_ code: BackendErrorCode, _ message: String) -> SimHTTPError {
        var error = SimHTTPError(code, message)
        error.headers[.wwwAuthenticate] = "Bearer"
        return error
    }
}
