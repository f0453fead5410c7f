import BackendClient
import DriverAPI
import JSONRPC

/// The `auth.*` methods' owner: a driver logs in through the backend session, and logs out through the workflow
/// (which clears the driver's personal data with the tokens).
struct AuthDesk: MethodOwner, Sendable {
    let session: BackendSession?
    let workflow: Workflow

    func register(in router: inout RPCRouter) {
        router.register(Methods.authLogin) { [session] params, _ in
            guard let session else { throw APIError.unavailable("no backend is configured (backend.url or --backend)") }
            guard !params.username.isEmpty, !params.password.isEmpty else {
                throw APIError.invalidParams("username and password must not be empty")
            }
            do {
                let tokens = try await session.login(username: params.username, password: params.password)
                return LoginResult(driverId: tokens.driverId, expiresAt: tokens.expiresAt)
            } catch let error as BackendClientError where error.errorClass != .transient {
                throw APIError(.permissionDenied, "the backend refused the login: \(error.body?.error.message ?? error.reason)")
            } catch let error as BackendClientError {
                throw APIError.unavailable("the backend cannot be reached: \(error.reason)")
            }
        }
        router.register(Methods.authLogout) { [workflow] _, _ in try await workflow.logout() }
    }
}
