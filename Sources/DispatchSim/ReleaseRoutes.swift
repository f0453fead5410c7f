import BackendContract
import Crypto
import DispatchSimCore
import Foundation
import Hummingbird

/// Releases: the fleet publishes a package (`PUT /sim/releases`, the `.deb`'s bytes as the body) and stages it to
/// units; a unit fetches what is staged for it, downloads it chunk by chunk, and answers.
struct ReleaseRoutes {
    let state: SimState
    let shelf = ReleaseShelf()

    /// A package may be this large.
    static let maxPackageBytes = 128 << 20

    func add(rider: RouterGroup<SimContext>, router: Router<SimContext>) {
        rider.get("release") { _, context -> Response in
            let driverId = try context.requireDriver()
            return try SimJSON.response(await state.read { world, _ in world.release(driverId: driverId) })
        }
        rider.get("release/:sha256/chunks/:index") { _, context -> Response in
            _ = try context.requireDriver()
            let sha256 = try context.parameters.require("sha256")
            guard let index = Int(try context.parameters.require("index")), let chunk = shelf.chunk(sha256, index: index) else {
                throw SimHTTPError(.notFound, "no such package or chunk")
            }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: .init(byteBuffer: ByteBuffer(bytes: chunk)))
        }
        rider.post("release/acks") { request, context in
            try await RiderRoutes(state: state).recordReport(request, context, UpdateAck.self) {
                $0.recordUpdateAck($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5)
            }
        }
        let sim = router.group("/sim")
        sim.get("releases") { _, _ -> Response in
            let (staged, acks) = await state.read { world, _ in (world.stagedReleases, world.updateAcks) }
            let versions = staged.compactMapValues { signed in
                // A raw manifest staged on purpose may not decode: it then names no version.
                Data(base64Encoded: signed.payload).flatMap { try? JSONDecoder().decode(ReleaseManifest.self, from: $0) }?.version
            }
            return try SimJSON.response(ReleaseOverview(publicKey: ConfigSigner.releasePublicKey, releases: shelf.overview, staged: versions, acks: acks))
        }
        sim.put("releases") { request, _ -> Response in
            let query = request.uri.queryParameters
            guard let package = query.get("package"), let version = query.get("version"), let architecture = query.get("architecture"),
                  !package.isEmpty, !version.isEmpty, !architecture.isEmpty
            else { throw SimHTTPError(.badRequest, "the query's package, version and architecture are required (dpkg-deb -f PACKAGE.deb ...)") }
            let signing = try query.get("signing").map {
                guard let signing = ConfigSigner.Signing(rawValue: $0) else { throw SimHTTPError(.badRequest, "signing: fleet, other or none") }
                return signing
            } ?? .fleet
            let chunkSize = query.get("chunkSize").flatMap { Int($0) } ?? 256 << 10
            guard (1024...(8 << 20)).contains(chunkSize) else { throw SimHTTPError(.badRequest, "chunkSize: 1024 to 8388608 bytes") }
            let drivers = (query.get("drivers") ?? "drv-1").split(separator: ",").map(String.init)
            let bytes = Array(try await SimJSON.body(of: request, limit: Self.maxPackageBytes).readableBytesView)
            guard !bytes.isEmpty else { throw SimHTTPError(.badRequest, "the body is the package's bytes") }
            let manifest = ReleaseShelf.manifest(
                of: bytes, package: package, version: version, architecture: architecture, chunkSize: chunkSize, now: SimState.now())
            // A fleet tool's mistake, on purpose: the manifest names another whole-file SHA-256 (its chunks stay true,
            // and are served under the declared one), so no download can ever match it.
            var declared = manifest
            if let sha256 = query.get("declaredSha256") {
                guard ReleaseRules.isSHA256(sha256) else {
                    throw SimHTTPError(.badRequest, "declaredSha256: 64 lower-case hex digits")
                }
                declared.sha256 = sha256
            }
            shelf.put(bytes, manifest: manifest, as: declared.sha256)
            let signed = try ConfigSigner.sign(declared, with: signing)
            try await state.change { world, now in try world.stageRelease(signed, driverIds: drivers, now: now) }
            return try SimJSON.response(signed)
        }
        // A manifest exactly as a (buggy, or hostile) fleet tool wrote it, signed as asked and staged: what a unit must
        // refuse without a trap. Its chunks are served only when its SHA-256 names a package published before.
        sim.put("releases/manifest") { request, _ -> Response in
            let query = request.uri.queryParameters
            let signing = try query.get("signing").map {
                guard let signing = ConfigSigner.Signing(rawValue: $0) else { throw SimHTTPError(.badRequest, "signing: fleet, other or none") }
                return signing
            } ?? .fleet
            let drivers = (query.get("drivers") ?? "drv-1").split(separator: ",").map(String.init)
            let body = try await SimJSON.body(of: request, limit: 1 << 20)
            let manifest: ReleaseManifest
            do {
                manifest = try JSONDecoder().decode(ReleaseManifest.self, from: Data(body.readableBytesView))
            } catch {
                throw SimHTTPError(.badRequest, "the body is a release manifest's JSON: \(error)")
            }
            let signed = try ConfigSigner.sign(manifest, with: signing)
            try await state.change { world, now in try world.stageRelease(signed, driverIds: drivers, now: now) }
            return try SimJSON.response(signed)
        }
    }
}
