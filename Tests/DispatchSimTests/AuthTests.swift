import BackendContract
import DispatchSim
import Foundation
import Testing

@Suite("dispatch-sim: login, tokens, expiry, revocation")
struct AuthTests {
    @Test("login gives a Bearer JWT; wrong credentials, a missing, garbled or refresh token are 401s with WWW-Authenticate")
    func login() async throws {
        try await SimHarness.run { sim in
            let tokens = try await sim.login()
            #expect(tokens.tokenType == "Bearer" && tokens.driverId == "drv-1" && tokens.expiresIn == 3600)
            #expect(tokens.accessToken.split(separator: ".").count == 3)
            #expect(try await sim.request(.GET, BackendPaths.activeTasks, token: tokens.accessToken).status == 200)

            let wrong = try await sim.json(.POST, BackendPaths.login, LoginRequest(username: "rider1", password: "nope"))
            #expect(wrong.status == 401 && wrong.error?.code == .invalidCredentials)
            let malformed = try await sim.request(.POST, BackendPaths.login, body: Data("{".utf8))
            #expect(malformed.status == 400 && malformed.error?.code == .badRequest)

            for token in [nil, "garbage", tokens.refreshToken, tokens.accessToken.dropLast(2) + "xx"] as [String?] {
                let reply = try await sim.request(.GET, BackendPaths.activeTasks, token: token)
                #expect(reply.status == 401 && reply.error?.code == .unauthorized, "token \(String(describing: token))")
                #expect(reply.headers["WWW-Authenticate"].first == "Bearer")
            }
        }
    }

    @Test("an access token expires (TOKEN_EXPIRED); the refresh token gets a new one; revocation ends both")
    func expiryAndRefresh() async throws {
        var options = SimOptions()
        options.accessTokenSeconds = 1
        try await SimHarness.run(options) { sim in
            let tokens = try await sim.login()
            // Expiry is a whole second rounded up: a 1-s token lives 1 to 2 s, so 2.1 s always passes it.
            try await Task.sleep(for: .seconds(2.1))
            let expired = try await sim.request(.GET, BackendPaths.activeTasks, token: tokens.accessToken)
            #expect(expired.status == 401 && expired.error?.code == .tokenExpired)

            let refreshed = try await sim.json(.POST, BackendPaths.refresh, RefreshRequest(refreshToken: tokens.refreshToken)).decode(TokenResponse.self)
            #expect(try await sim.request(.GET, BackendPaths.activeTasks, token: refreshed.accessToken).status == 200)
            let accessAsRefresh = try await sim.json(.POST, BackendPaths.refresh, RefreshRequest(refreshToken: refreshed.accessToken))
            #expect(accessAsRefresh.status == 401)

            #expect(try await sim.json(.POST, "/sim/tokens/revoke", ["driverId": "drv-1"]).status == 204)
            let revoked = try await sim.request(.GET, BackendPaths.activeTasks, token: refreshed.accessToken)
            #expect(revoked.status == 401 && revoked.error?.message.contains("revoked") == true)
            #expect(try await sim.json(.POST, BackendPaths.refresh, RefreshRequest(refreshToken: refreshed.refreshToken)).status == 401)
            #expect(try await sim.json(.POST, "/sim/tokens/revoke", ["driverId": "nobody"]).status == 404)
            // A new login works again.
            #expect(try await sim.request(.GET, BackendPaths.activeTasks, token: sim.login().accessToken).status == 200)
        }
    }
}
