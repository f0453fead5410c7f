import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import Logging

/// Proof of delivery (`pod.*`): a photo copied into the spool, or the customer's code, checked by the backend at once
/// when it can be (a wrong code is an error to re-enter) and queued as unverified when not (the verdict comes later as
/// `pod.verdict`). The rules and the commit are the workflow's (`Workflow.recordProof`, its one way to commit a
/// driver's change); the file's copy and the online check run here, off the workflow's actor.
struct ProofOfDelivery: Sendable {
    let workflow: Workflow
    let spool: PhotoSpool
    let outbox: Outbox
    /// The backend's calls (the code's check); nil without a backend.
    let session: BackendSession?
    /// The sending loop's "now" (a code goes after its task's queued transitions).
    let flush: OutboxFlush?
    let clock: DaemonClock
    let logger: Logger

    /// Copies the photo into the spool, stamps where and when, and queues its upload. (A copy whose task stopped being
    /// provable meanwhile stays in the spool until the logout's wipe: it is named by the task and its hash.)
    func photo(taskId: String?, path: String) async throws -> PODResult {
        let task = try await workflow.provableTask(taskId, type: .photo)
        let stamp = clock.now()
        let location = workflow.currentLocation()
        let photo = try spool.take(path, taskId: task.id, lat: location?.lat, lng: location?.lng, stamp: stamp)
        let item = OutboxItemRecord(
            kind: .podPhoto, taskId: task.id, idempotencyKey: Workflow.newKey(), payload: try Workflow.encode(photo), createdAt: stamp.time)
        let view = try await workflow.recordProof(task.id, type: .photo, pod: .captured, item: item)
        logger.info("task \(task.id): photo proof captured", metadata: ["task_id": "\(task.id)", "bytes": "\(photo.bytes)"])
        return PODResult(task: view, sha256: photo.sha256, bytes: photo.bytes)
    }

    /// The customer's code: online when the backend is reachable and the task's queued transitions have gone before it;
    /// queued under the same key otherwise (a code that did arrive counts once).
    func otp(taskId: String?, otp: String) async throws -> PODResult {
        guard otp.count == 4, otp.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw APIError.invalidParams("otp: the customer's code is 4 digits")
        }
        let task = try await workflow.provableTask(taskId, type: .otp)
        if task.pod == .accepted { return PODResult(task: await workflow.view(task)) }
        let key = Workflow.newKey()
        let stamp = clock.now()
        let body = try Workflow.encode(OTPSubmission(value: otp, timestamp: stamp.time, timeSource: stamp.source))
        if try await checkOnline(taskId: task.id, body: body, key: key) {
            // The driver is told it is accepted once it is on disk: after a power cut the unit must still know, offline too.
            let view = try await workflow.recordProof(task.id, type: .otp, pod: .accepted, item: nil)
            logger.info("task \(task.id): code accepted", metadata: ["task_id": "\(task.id)"])
            return PODResult(task: view)
        }
        let item = OutboxItemRecord(kind: .podOTP, taskId: task.id, idempotencyKey: key, payload: body, createdAt: clock.now().time)
        return PODResult(task: try await workflow.recordProof(task.id, type: .otp, pod: .unverified, item: item))
    }

    /// Whether the backend took the code now. False when it cannot be asked (offline, the task's transitions still
    /// queued, the request lost): the caller queues it. A wrong or locked code is thrown.
    private func checkOnline(taskId: String, body: Data, key: String) async throws -> Bool {
        guard let flush, let session, session.isOnline else { return false }
        // The code must reach the backend after the task's queued transitions (a queue that cannot be read: queued).
        func queueIsEmpty() -> Bool {
            logger.valueOrLog("reading task \(taskId)'s queue") {
                try outbox.hasPendingItems(taskId: taskId, besides: nil, kinds: Workflow.taskChangeKinds)
            } == false
        }
        if !queueIsEmpty() {
            await flush.now()
            guard queueIsEmpty() else { return false }
        }
        do {
            _ = try await session.authorized { client, token in
                try await client.postOTP(taskId: taskId, body: body, idempotencyKey: key, token: token)
            }
            return true
        } catch let error as BackendClientError where error.errorClass == .refused {
            throw Self.otpRefusal(BackendRefusal(error))
        } catch {
            logger.notice("the code could not be checked online; queued", metadata: ["task_id": "\(taskId)", "error": "\(error)"])
            return false
        }
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
