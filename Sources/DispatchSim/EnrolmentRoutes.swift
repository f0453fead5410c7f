import BackendContract
import Hummingbird
import NIOCore
import NIOSSL
import X509

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
        router.post(RouterPath(stringLiteral: BackendPaths.renew)) { request, _ -> Response in
            guard let ca else { throw noCA }
            let renewal = try await SimJSON.decode(RenewalRequest.self, from: request)
            return try SimJSON.response(try ca.renew(renewal, now: SimState.now()))
        }
        router.post("/sim/units/revoke") { request, _ -> Response in
            guard let ca else { throw noCA }
            struct Revocation: Decodable { var serial: String }
            let revocation = try await SimJSON.decode(Revocation.self, from: request)
            ca.revoke(serial: revocation.serial)
            return try SimJSON.response(["revoked": revocation.serial.lowercased()])
        }
        router.post("/sim/units/rotate") { request, _ -> Response in
            guard let ca else { throw noCA }
            struct Rotation: Decodable { var serial: String }
            let rotation = try await SimJSON.decode(Rotation.self, from: request)
            ca.askRotation(serial: rotation.serial)
            return try SimJSON.response(["rotate": rotation.serial.lowercased()])
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

/// On the HTTPS listener, every API request but the enrolment and the renewal needs a client certificate the fleet's
/// CA issued (the TLS handshake verified any that was given): without one, 403 `CERTIFICATE_REQUIRED`; with a revoked
/// one, 403 `UNIT_REVOKED`.
enum UnitCertificateCheck {
    static func refusal(path: String, channel: any Channel, ca: FleetCA?) -> SimHTTPError? {
        guard let ca, path.hasPrefix("/api/"), path != BackendPaths.enrol, path != BackendPaths.renew else { return nil }
        channel.eventLoop.preconditionInEventLoop()
        // Every connection of the HTTPS listener has one (`ca` is set only with it): without it, nothing is let through.
        let tls: NIOSSLServerHandler
        do {
            tls = try channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
        } catch {
            return SimHTTPError(.internalError, "no TLS on this connection to read a certificate from: \(error)")
        }
        guard let peer = tls.peerCertificate else {
            return SimHTTPError(.certificateRequired, "this backend needs the unit's certificate: enrol first")
        }
        let serial: String
        do {
            serial = FleetCA.serial(of: try Certificate(derEncoded: try peer.toDERBytes()))
        } catch {
            return SimHTTPError(.certificateRequired, "the unit's certificate cannot be read: \(error)")
        }
        return ca.isRevoked(serial: serial) ? SimHTTPError(.unitRevoked, "this unit's certificate was revoked") : nil
    }
}

struct UnitCertificateMiddleware: RouterMiddleware {
    typealias Context = SimContext
    let ca: FleetCA

    func handle(_ request: Request, context: SimContext, next: (Request, SimContext) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        let channel = context.channel
        if let refusal = try await channel.eventLoop.submit({ [ca] in UnitCertificateCheck.refusal(path: path, channel: channel, ca: ca) }).get() {
            throw refusal
        }
        return try await next(request, context)
    }
}
