import BackendContract
import Hummingbird

/// Login and token refresh.
struct AuthRoutes {
    let tokens: TokenIssuer
    let state: SimState

    func add(to router: Router<SimContext>) {
        router.post("/api/v1/auth/login") { request, _ -> Response in
            let login = try await SimJSON.decode(LoginRequest.self, from: request)
            let issued = await state.read { world, now in
                world.driver(username: login.username, password: login.password).map {
                    tokens.issue(driverId: $0.id, language: $0.language, generation: world.tokenGeneration(driverId: $0.id), now: now)
                }
            }
            guard let issued else { throw SimHTTPError(.invalidCredentials, "wrong username or password") }
            return try SimJSON.response(issued)
        }
        router.post("/api/v1/auth/refresh") { request, _ -> Response in
            let refresh = try await SimJSON.decode(RefreshRequest.self, from: request)
            let claims: TokenIssuer.Claims
            switch tokens.verify(refresh.refreshToken, kind: .refresh, now: SimState.now()) {
            case .success(let verified): claims = verified
            case .failure(.expired(_)): throw BearerAuthMiddleware.unauthorized(.tokenExpired, "the refresh token has expired; log in again")
            case .failure: throw BearerAuthMiddleware.unauthorized(.unauthorized, "the refresh token is not valid")
            }
            let issued = await state.read { world, now in
                world.driver(id: claims.sub).flatMap { driver in
                    world.tokenGeneration(driverId: claims.sub) == claims.gen
                        ? tokens.issue(driverId: claims.sub, language: driver.language, generation: claims.gen, now: now) : nil
                }
            }
            guard let issued else { throw BearerAuthMiddleware.unauthorized(.unauthorized, "the refresh token was revoked; log in again") }
            return try SimJSON.response(issued)
        }
    }
}
