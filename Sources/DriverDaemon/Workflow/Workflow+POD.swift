import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials

extension Workflow {
    /// A task can be proved delivered once its goods are on board (the backend's rule too).
    static let provable: Set<TaskStatus> = [.pickedUp, .arrivedAtDestination]

    private func provableTask(_ taskId: String?, type: PODType) throws -> LocalTask {
        let task = try resolve(taskId)
        guard task.detail.podType == type else {
            throw APIError(.actionRefused, "task \(task.id) is proved by \(task.detail.podType == .otp ? "the customer's code (pod otp)" : "a photo (pod photo)")")
        }
        guard Self.provable.contains(task.status) else {
            throw APIError(.actionRefused, "proof of delivery comes once the goods are picked up; task \(task.id) is \(task.status.rawValue)",
                data: .object(["current": .string(task.status.rawValue)]))
        }
        return task
    }

    /// Copies the photo into the spool, stamps where and when, and queues its upload.
    func capturePhoto(taskId: String?, path: String) throws -> PODResult {
        var task = try provableTask(taskId, type: .photo)
        let stamp = tracker.clock.now()
        let now = stamp.time
        let location = currentLocation()
        let photo = try spool.take(path, taskId: task.id, lat: location?.lat, lng: location?.lng, stamp: stamp)
        let item = OutboxItemRecord(
            kind: .podPhoto, taskId: task.id, idempotencyKey: Self.newKey(), payload: try Self.encode(photo), createdAt: now)
        task.pod = .captured
        task.sync = .pending
        task.updatedAt = now
        try commit(task, item: item)
        logger.info("task \(task.id): photo proof captured", metadata: ["task_id": "\(task.id)", "bytes": "\(photo.bytes)"])
        return PODResult(task: view(task), sha256: photo.sha256, bytes: photo.bytes)
    }

    /// The customer's code: checked by the backend at once when it can be (a wrong code is an error to
    /// re-enter), queued as unverified when not (the verdict comes later as `pod.verdict`).
    func submitOTP(taskId: String?, otp: String) async throws -> PODResult {
        guard otp.count == 4, otp.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw APIError.invalidParams("otp: the customer's code is 4 digits")
        }
        var task = try provableTask(taskId, type: .otp)
        if task.pod == .accepted { return PODResult(task: view(task)) }
        let key = Self.newKey()
        let stamp = tracker.clock.now()
        let body = try Self.encode(OTPSubmission(value: otp, timestamp: stamp.time, timeSource: stamp.source))
        if let flush, let session, session.isOnline {
            // The code must reach the backend after the task's queued transitions (a queue that cannot be read: queued).
            func queueIsEmpty() -> Bool {
                logger.valueOrLog("reading task \(task.id)'s queue") { try outbox.hasPendingItems(taskId: task.id, besides: nil, kinds: Self.taskChangeKinds) } == false
            }
            var ready = queueIsEmpty()
            if !ready {
                await flush.now()
                ready = queueIsEmpty()
            }
            if ready {
                do {
                    _ = try await session.authorized { client, token in
                        try await client.postOTP(taskId: task.id, body: body, idempotencyKey: key, token: token)
                    }
                    task = tasks[task.id] ?? task
                    task.pod = .accepted
                    task.updatedAt = now()
                    try commit(task, item: nil)
                    logger.info("task \(task.id): code accepted", metadata: ["task_id": "\(task.id)"])
                    // The driver is told it is accepted: after a power cut the unit must still know, offline too.
                    try await syncToDisk()
                    return PODResult(task: view(task))
                } catch let error as BackendClientError where error.errorClass == .refused {
                    throw Self.otpRefusal(BackendRefusal(error))
                } catch {
                    // Unreachable after all: queued below under the same key, so a code that did arrive counts once.
                    logger.notice("the code could not be checked online; queued", metadata: ["task_id": "\(task.id)", "error": "\(error)"])
                }
            }
        }
        task = tasks[task.id] ?? task
        task.pod = .unverified
        task.sync = .pending
        task.updatedAt = now()
        try commit(task, item: OutboxItemRecord(kind: .podOTP, taskId: task.id, idempotencyKey: key, payload: body, createdAt: now()))
        return PODResult(task: view(task))
    }

    static func otpRefusal(_ refusal: BackendRefusal) -> APIError {
        switch refusal.code {
        case .otpInvalid:
            let left = refusal.attemptsLeft
            return APIError(
                .proofRejected, "wrong code: ask the customer again" + (left.map { " (\($0) attempts left)" } ?? ""),
                data: left.map { .object(["attemptsLeft": .number(String($0))]) })
        case .otpLocked:
            return APIError(.proofRejected, "too many wrong codes: the code is locked, call dispatch", data: .object(["attemptsLeft": .number("0")]))
        default:
            return APIError(.actionRefused, "the backend refused the code: \(refusal.message)")
        }
    }
}
