import BackendContract
import DriverAPI
@testable import DriverDaemon
import DriverDomain
import Foundation
import JSONRPC
import Testing

/// Proof of delivery as the driver gives it, in-process against the reference backend's rules: the customer's code
/// online and offline, a photo spooled.
@Suite("Proof of delivery in-process", .serialized)
struct ProofOfDeliveryInProcessTests {
    /// The API error a call ended with.
    static func refusal(_ call: () async throws -> Void) async throws -> APIError? {
        do {
            try await call()
            return nil
        } catch let failure as RPCClient.Failure {
            guard case .server(let error) = failure else { throw failure }
            return error
        }
    }

    /// The route synced and `taskId`'s goods on board, parked with the engine off (the safety gate lets a proof through).
    static func pickedUp(_ daemon: InProcessDaemon, _ taskId: String) async throws {
        try await daemon.waitUntil("the route synced") { try await daemon.call(Methods.routeGet).stops.count == 4 }
        daemon.assembly.safety.setIgnition(false)
        for method in [Methods.taskAccept, Methods.taskArrive, Methods.taskPickup] {
            _ = try await daemon.call(method, TaskParams(taskId: taskId))
        }
    }

    @Test("a code before the pickup is refused with the task's status; a wrong code online is an error to re-enter, with the attempts left; the right one is accepted, and asked again it is answered without the backend")
    func codeOnline() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await daemon.waitUntil("the route synced") { try await daemon.call(Methods.routeGet).stops.count == 4 }
            // Parked with the engine off: the safety gate lets the proof through.
            daemon.assembly.safety.setIgnition(false)
            _ = try await daemon.call(Methods.taskAccept, TaskParams(taskId: "task-1001"))
            let early = try await Self.refusal { _ = try await daemon.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "4812")) }
            #expect(early?.kind == .actionRefused && early?.data?["current"] == .string("ACCEPTED"), "\(String(describing: early))")
            for method in [Methods.taskArrive, Methods.taskPickup] { _ = try await daemon.call(method, TaskParams(taskId: "task-1001")) }
            let wrong = try await Self.refusal { _ = try await daemon.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "0000")) }
            #expect(wrong?.kind == .proofRejected && wrong?.message.contains("attempts left") == true, "\(String(describing: wrong))")
            let accepted = try await daemon.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "4812"))
            #expect(accepted.task.pod == .accepted)
            let asked = backend.requests.filter { $0 == "postOTP" }.count
            #expect(asked == 2, "the wrong code and the right one: \(backend.requests)")
            let again = try await daemon.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "4812"))
            #expect(again.task.pod == .accepted && backend.requests.filter { $0 == "postOTP" }.count == asked)
            let format = try await Self.refusal { _ = try await daemon.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "12a4")) }
            #expect(format?.kind == .invalidParams)
        }
    }

    @Test("offline: the code is queued as unverified under one key and goes when the backend is back; its answer makes it accepted")
    func codeOffline() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await Self.pickedUp(daemon, "task-1001")
            backend.setDown("network unreachable")
            let queued = try await daemon.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "4812"))
            #expect(queued.task.pod == .unverified && queued.task.sync == .pending, "\(queued.task)")
            #expect(try await daemon.call(Methods.outboxStatus).proofs == 1)
            backend.setDown(nil)
            try await daemon.waitUntil("the code delivered and accepted") {
                _ = try await daemon.call(Methods.outboxFlush)
                return try await daemon.call(Methods.routeGet).tasks.first { $0.id == "task-1001" }?.pod == .accepted
            }
            #expect(try await daemon.call(Methods.outboxStatus).proofs == 0)
        }
    }

    @Test("a photo is checked, spooled under the task's name and its hash, and queued; a file that is not an image is refused and nothing is queued")
    func photo() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await Self.pickedUp(daemon, "task-1002")
            backend.setDown("network unreachable")
            let text = daemon.directory + "/note.txt"
            try Data("not a photo".utf8).write(to: URL(fileURLWithPath: text))
            let notImage = try await Self.refusal { _ = try await daemon.call(Methods.podPhoto, PhotoParams(taskId: "task-1002", path: text)) }
            #expect(notImage?.kind == .invalidParams && notImage?.message.contains("not a JPEG or PNG") == true, "\(String(describing: notImage))")
            let image = daemon.directory + "/door.jpg"
            let bytes = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x42, count: 200))
            try bytes.write(to: URL(fileURLWithPath: image))
            let proof = try await daemon.call(Methods.podPhoto, PhotoParams(taskId: "task-1002", path: image))
            #expect(proof.task.pod == .captured && proof.bytes == bytes.count && proof.sha256?.count == 64, "\(proof)")
            let spooled = try FileManager.default.contentsOfDirectory(atPath: daemon.directory + "/spool")
            #expect(spooled == ["task-1002-\(proof.sha256!.prefix(16)).jpg"], "\(spooled)")
            #expect(try await daemon.call(Methods.outboxStatus).proofs == 1)
        }
    }
}
