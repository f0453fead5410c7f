import BackendContract
import Crypto
import DispatchSimCore
import DriverAPI
import Foundation
import Hummingbird
import NIOCore

enum PhotoLimits {
    static let maxRequestBytes = PhotoPart.maxBytes + 64 * 1024
}

/// `POST /api/v1/rider/tasks/{taskId}/pod`: an OTP as JSON or a photo as multipart/form-data.
struct PODRoutes {
    let state: SimState
    let photos: PhotoStore

    func add(to group: RouterGroup<SimContext>) {
        group.post("tasks/:taskId/pod") { request, context -> Response in
            let driverId = try context.requireDriver()
            let taskId = try context.parameters.require("taskId")
            let key = request.headers[.idempotencyKey]
            let contentType = request.headers[.contentType] ?? ""
            let result: (outcome: PODOutcome, replayed: Bool)
            if contentType.lowercased().hasPrefix("multipart/form-data") {
                let photo = try await receivePhoto(request, contentType: contentType)
                result = try await state.change { world, now in
                    world.submitPhoto(taskId: taskId, driverId: driverId, photo: photo, idempotencyKey: key, now: now)
                }
            } else if contentType.lowercased().hasPrefix("application/json") {
                let otp = try await SimJSON.decode(OTPSubmission.self, from: request)
                guard otp.type == .otp else { throw SimHTTPError(.badRequest, "send a photo as multipart/form-data") }
                result = try await state.change { world, now in
                    world.submitOTP(taskId: taskId, driverId: driverId, value: otp.value, idempotencyKey: key, now: now)
                }
            } else {
                throw SimHTTPError(.unsupportedMediaType, "send application/json (OTP) or multipart/form-data (photo)")
            }
            return try Self.answer(result.outcome, replayed: result.replayed, taskId: taskId)
        }
    }

    private static func answer(_ outcome: PODOutcome, replayed: Bool, taskId: String) throws -> Response {
        switch outcome {
        case .accepted(let receipt): return try SimJSON.response(receipt, headers: replayed ? SimHTTPError.replayHeaders : [:])
        case .otpWrong(let left):
            throw SimHTTPError(.otpInvalid, "wrong code; \(left) attempts left", attemptsLeft: left, replayed: replayed)
        case .otpLocked: throw SimHTTPError(.otpLocked, "too many wrong codes; the OTP is locked", attemptsLeft: 0, replayed: replayed)
        case .typeMismatch(let task):
            throw SimHTTPError(.podTypeMismatch, "task \(taskId) is proved by \(task.podType.rawValue)", task: task, replayed: replayed)
        case .notDeliverable(let task):
            throw SimHTTPError(
                .invalidTransition,
                "task \(taskId) is \(task.status.rawValue); a proof of delivery needs PICKED_UP or ARRIVED_AT_DESTINATION",
                task: task, replayed: replayed)
        case .keyReused: throw SimHTTPError(.idempotencyKeyReused, "this Idempotency-Key was used with another proof")
        case .notFound: throw SimHTTPError(.notFound, "no task \(taskId)")
        }
    }

    /// Reads the multipart form, checks the image and its checksum, stores it.
    private func receivePhoto(_ request: Request, contentType: String) async throws -> PhotoProof {
        guard let boundary = MultipartForm.boundary(contentType: contentType) else {
            throw SimHTTPError(.badRequest, "multipart/form-data needs a boundary")
        }
        let body = try await SimJSON.body(of: request, limit: PhotoLimits.maxRequestBytes)
        let form: MultipartForm
        do {
            form = try MultipartForm(Array(body.readableBytesView), boundary: boundary)
        } catch {
            throw SimHTTPError(.badRequest, "malformed multipart body: \(error)")
        }
        guard let image = form.parts[PhotoPart.photo]?.body else { throw SimHTTPError(.badRequest, "the photo part is missing") }
        guard image.count <= PhotoPart.maxBytes else {
            throw SimHTTPError(.payloadTooLarge, "a photo is at most \(PhotoPart.maxBytes) bytes")
        }
        let bytes = Array(image)
        guard ImageKind(sniffing: bytes) != nil else { throw SimHTTPError(.unsupportedMediaType, "the photo must be a JPEG or PNG image") }
        func number(_ name: String) throws -> Double {
            guard let text = form.parts[name]?.text, let value = Double(text), value.isFinite else {
                throw SimHTTPError(.badRequest, "\(name) must be a number")
            }
            return value
        }
        // Where it was taken is optional (no fix indoors), but lat and lng come together.
        let timestamp = try number(PhotoPart.timestamp)
        let hasPosition = form.parts[PhotoPart.lat] != nil || form.parts[PhotoPart.lng] != nil
        let lat = hasPosition ? try number(PhotoPart.lat) : nil, lng = hasPosition ? try number(PhotoPart.lng) : nil
        if let lat, let lng, !(-90...90).contains(lat) || !(-180...180).contains(lng) {
            throw SimHTTPError(.badRequest, "lat or lng out of range")
        }
        let sha256 = SHA256.hash(data: bytes).hexString
        if let claimed = form.parts[PhotoPart.sha256]?.text, claimed.lowercased() != sha256 {
            throw SimHTTPError(.checksumMismatch, "the photo's SHA-256 is \(sha256), not \(claimed)")
        }
        var timeSource: TimeSource?
        if let text = form.parts[PhotoPart.timeSource]?.text {
            guard let source = TimeSource(rawValue: text) else { throw SimHTTPError(.badRequest, "timeSource must be ntp, gps or unsynced") }
            timeSource = source
        }
        try photos.store(bytes, sha256: sha256)
        return PhotoProof(sha256: sha256, bytes: bytes.count, lat: lat, lng: lng, timestamp: timestamp, timeSource: timeSource)
    }
}

/// The image formats a photo proof may have, told by their first bytes.
enum ImageKind {
    case jpeg, png

    init?(sniffing bytes: [UInt8]) {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else {
            return nil
        }
    }

    var mediaType: String { self == .jpeg ? "image/jpeg" : "image/png" }
}
