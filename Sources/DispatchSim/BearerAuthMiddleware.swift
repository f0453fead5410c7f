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
        switch tokens.verify(String(header.dropFirst("Bearer ".count)), kind: .access, now: SimState.now()) {
        case .success(let verified): claims = verified
        case .failure(.expired): throw Self.unauthorized(.tokenExpired, "the access token has expired; refresh it")
        case .failure: throw Self.unauthorized(.unauthorized, "the access token is not valid")
        }
        let current = await state.read { world, _ in world.driver(id: claims.sub) != nil ? world.tokenGeneration(driverId: claims.sub) : nil }
        guard current == claims.gen else { throw Self.unauthorized(.unauthorized, "the access token was revoked") }
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
