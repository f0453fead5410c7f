import DriverAPI
import BackendContract
import DriverDomain

extension SimWorld {
    /// A task can be proved delivered once its goods are on board.
    private static let provable: Set<TaskStatus> = [.pickedUp, .arrivedAtDestination]

    /// The customer's code. With an idempotency key, a resent code (its answer lost) is answered as the first
    /// time and costs no attempt.
    public mutating func submitOTP(
        taskId: String, driverId: String, value: String, idempotencyKey: String?, now: Double
    ) -> (outcome: PODOutcome, replayed: Bool) {
        idempotent(\.podLedger, key: idempotencyKey, digest: "otp|\(taskId)|\(value)", keyReused: .keyReused, notFound: .notFound) {
            $0.submitOTP(taskId: taskId, driverId: driverId, value: value, now: now)
        }
    }

    /// A photo the HTTP layer stored and hashed.
    public mutating func submitPhoto(
        taskId: String, driverId: String, photo: PhotoProof, idempotencyKey: String?, now: Double
    ) -> (outcome: PODOutcome, replayed: Bool) {
        idempotent(\.podLedger, key: idempotencyKey, digest: "photo|\(taskId)|\(photo.sha256)", keyReused: .keyReused, notFound: .notFound) {
            $0.submitPhoto(taskId: taskId, driverId: driverId, photo: photo, now: now)
        }
    }

    private mutating func submitOTP(taskId: String, driverId: String, value: String, now: Double) -> PODOutcome {
        guard var record = record(taskId: taskId, driverId: driverId) else { return .notFound }
        guard record.task.podType == .otp, let expected = record.task.otp else { return .typeMismatch(riderTask(record)) }
        let receipt = PODReceipt(taskId: taskId, type: .otp, accepted: true)
        if record.podAccepted { return .accepted(receipt) }
        guard Self.provable.contains(record.task.status) else { return .notDeliverable(riderTask(record)) }
        guard record.otpAttemptsLeft > 0 else { return .otpLocked }
        if value == expected {
            record.podAccepted = true
            record.updatedAt = now
            tasks[taskId] = record
            stats.pods.append(.init(taskId: taskId, type: .otp, accepted: true, time: now))
            return .accepted(receipt)
        }
        record.otpAttemptsLeft -= 1
        tasks[taskId] = record
        stats.otpFailures += 1
        stats.pods.append(.init(taskId: taskId, type: .otp, accepted: false, time: now))
        return record.otpAttemptsLeft > 0 ? .otpWrong(attemptsLeft: record.otpAttemptsLeft) : .otpLocked
    }

    private mutating func submitPhoto(taskId: String, driverId: String, photo: PhotoProof, now: Double) -> PODOutcome {
        guard var record = record(taskId: taskId, driverId: driverId) else { return .notFound }
        guard record.task.podType == .photo else { return .typeMismatch(riderTask(record)) }
        guard record.podAccepted || Self.provable.contains(record.task.status) else { return .notDeliverable(riderTask(record)) }
        record.podAccepted = true
        record.photo = photo
        record.updatedAt = now
        tasks[taskId] = record
        stats.pods.append(.init(taskId: taskId, type: .photo, accepted: true, sha256: photo.sha256, bytes: photo.bytes, time: now))
        return .accepted(PODReceipt(taskId: taskId, type: .photo, accepted: true, sha256: photo.sha256, bytes: photo.bytes))
    }
}
