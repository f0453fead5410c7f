import BackendContract
import Hummingbird
import NIOCore
import NIOSSL

/// Enrolment (`POST /api/v1/units/enrol`, the one API path open without a client certificate) and the dispatcher's
/// claim tokens (`PUT /sim/claims`). Without `--tls-dir` there is no CA: both answer 404 and say so.
struct EnrolmentRoutes {
    let ca: FleetCA?

    func add(to router: Router<SimContext>) {
        let noCA = SimHTTPError(.notFound, "this dispatch-sim is no certificate authority: start it with --tls-dir")
        router.post(RouterPath(stringLiteral: BackendPaths.enrol)) { request, _ -> Response in
            guard let ca else { throw noCA }
            let enrolment = try await SimJSON.decode(EnrolmentRequest.self, from: request)
            return try SimJSON.response(try ca.enrol(enrolment, now: SimState.now()))
        }
        router.put("/sim/claims") { request, _ -> Response in
            guard let ca else { throw noCA }
            struct Claim: Decodable {
                var token: String
                var uses: Int
            }
            let claim = try await SimJSON.decode(Claim.self, from: request)
            ca.setClaim(claim.token, uses: claim.uses)
            return try SimJSON.response(["token": claim.token, "uses": "\(max(0, claim.uses))"])
        }
    }
}

/// On the HTTPS listener, every API request but the enrolment needs a client certificate the fleet's CA issued
/// (the TLS handshake verified any that was given): without one, 403 `CERTIFICATE_REQUIRED`.
enum UnitCertificateCheck {
    static func refusal(path: String, channel: any Channel) -> SimHTTPError? {
        guard path.hasPrefix("/api/"), path != BackendPaths.enrol else { return nil }
        channel.eventLoop.preconditionInEventLoop()
        guard let tls = try? channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self) else {
            return nil  // plain HTTP on loopback: no TLS to present a certificate in
        }
        return tls.peerCertificate == nil ? SimHTTPError(.certificateRequired, "this backend needs the unit's certificate: enrol first") : nil
    }
}

struct UnitCertificateMiddleware: RouterMiddleware {
    typealias Context = SimContext

    func handle(_ request: Request, context: SimContext, next: (Request, SimContext) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        let channel = context.channel
        if let refusal = try await channel.eventLoop.submit({ UnitCertificateCheck.refusal(path: path, channel: channel) }).get() {
            throw refusal
        }
        return try await next(request, context)
    }
}
