import BackendContract
import DriverAPI
import DriverDomain
import FoundationEssentials
import Logging

/// A release as the backend offered it: the signed manifest exactly as sent, its manifest, and the digest of both
/// (what the unit's answers to it are keyed by). What the update desk's machine carries as its `Offer`.
struct ReleaseOffer: Sendable, Equatable {
    let signed: SignedRelease
    let manifest: ReleaseManifest
    let digest: String

    /// Throws when the payload is not base64 of a manifest's JSON.
    init(_ signed: SignedRelease) throws {
        guard let payload = Data(base64Encoded: signed.payload) else { throw APIError(.invalidParams, "the payload is not base64") }
        self.signed = signed
        manifest = try Codec.decode(ReleaseManifest.self, from: payload)
        digest = FleetSignature.sha256Hex(Data(signed.payload.utf8) + Data((signed.signature ?? "").utf8))
    }
    var release: UpdateRelease { UpdateRelease(sha256: manifest.sha256, chunks: manifest.chunks.count) }

    /// What the backend stages for this unit now (nil: nothing, or a release that is not base64 of a manifest's JSON,
    /// logged and ignored). Throws when the backend was not reached.
    static func staged(session: BackendSession?, logger: Logger) async throws -> ReleaseOffer? {
        guard let session else { throw APIError(.unavailable, "no backend is configured (backend.url)") }
        let reply: ReleaseReply
        do {
            reply = try await session.authorized { client, token in try await client.release(token: token) }
        } catch {
            logger.info("release not fetched: \(error)")
            throw APIError(.unavailable, "the backend was not reached: \(error)")
        }
        guard let signed = reply.release else { return nil }
        do {
            return try ReleaseOffer(signed)
        } catch {
            logger.error("the backend's release is not base64 of a manifest's JSON: ignored (\(error))")
            return nil
        }
    }

    /// How far its download stands, for `update.status`.
    func progress(chunksHave: Int, phase: UpdatePhase, waitingFor: String?) -> ReleaseProgress {
        let state: ReleaseProgress.State = switch phase {
        case .downloading: .downloading
        case .paused: .paused
        case .downloaded: .downloaded
        case .installing: .installing
        }
        return ReleaseProgress(
            package: manifest.package, version: manifest.version, size: manifest.size,
            downloadedBytes: min(manifest.size, chunksHave * manifest.chunkSize), state: state, waitingFor: waitingFor)
    }

    /// Left free for the outbox beside a release.
    static let spareBytes = 32 << 20

    /// Why this release may not be installed here, or nil: the update mode and the release key, the signature, then the
    /// rules driverd-update applies again (`ReleaseRules`, against the installed package), then the disk space.
    func refusal(mode: UpdateMode, publicKey: String, installed: (version: String, architecture: String)?, freeBytes: Int?) -> String? {
        if mode == .external { return "this unit's image is updated externally (update.mode = external): it runs \(DaemonVersion.current)" }
        guard !publicKey.isEmpty else { return "this unit has no update.public_key: it takes no release" }
        guard let signature = signed.signature, !signature.isEmpty, let payload = Data(base64Encoded: signed.payload) else {
            return "unsigned: a release must carry the fleet's Ed25519 signature"
        }
        guard FleetSignature.isValid(signature, of: payload, publicKey: publicKey) else {
            return "bad signature: not made by the release key this unit trusts (update.public_key)"
        }
        if let reason = ReleaseRules.refusal(of: manifest, installed: installed) { return reason }
        // Room for the download and for driverd-update's copy of it, with a margin for the database (the rules bound
        // the size: no overflow).
        let needed = 2 * manifest.size + Self.spareBytes
        if let freeBytes, freeBytes < needed { return "not enough disk space: needs \(needed >> 20) MiB, \(freeBytes >> 20) MiB free" }
        return nil
    }
}
