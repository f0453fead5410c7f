import BackendContract
import Crypto
import DispatchSim
import Foundation
import Testing

@Suite("dispatch-sim: proof of delivery")
struct PODTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array("a small test image".utf8) + [0xFF, 0xD9]

    func multipart(_ photo: [UInt8], fields: [String: String], boundary: String = "XyZ-boundary") -> Data {
        var body = Data()
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"pod.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
        body += Data(photo) + Data("\r\n--\(boundary)--\r\n".utf8)
        return body
    }

    @Test("OTP: wrong codes are 400 with attempts left, then 429; a resent key costs nothing; then DELIVERED")
    func otp() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let pod = BackendPaths.taskPOD("task-1001")
            let tooEarly = try await sim.json(.POST, pod, OTPSubmission(value: "4812"), token: token)
            #expect(tooEarly.status == 409 && tooEarly.error?.task?.status == .assigned)
            try await sim.advance("task-1001", through: [.ACCEPTED, .ARRIVED_AT_STORE, .PICKED_UP, .ARRIVED_AT_DESTINATION], token: token)
            let wrong = try await sim.json(.POST, pod, OTPSubmission(value: "0000"), token: token, headers: [("Idempotency-Key", "otp-1")])
            #expect(wrong.status == 400 && wrong.error?.code == .otpInvalid && wrong.error?.attemptsLeft == 2)
            let resent = try await sim.json(.POST, pod, OTPSubmission(value: "0000"), token: token, headers: [("Idempotency-Key", "otp-1")])
            #expect(resent.status == 400 && resent.body == wrong.body && resent.headers["Idempotent-Replayed"].first == "true")
            let right = try await sim.json(.POST, pod, OTPSubmission(value: "4812"), token: token)
            #expect(right.status == 200)
            #expect(try right.decode(PODReceipt.self) == PODReceipt(taskId: "task-1001", type: .otp, accepted: true))
            #expect(try await sim.status("task-1001", .DELIVERED, key: "deliver", token: token).status == 200)
            let photoTask = try await sim.json(.POST, BackendPaths.taskPOD("task-1002"), OTPSubmission(value: "4812"), token: token)
            #expect(photoTask.status == 409 && photoTask.error?.code == .podTypeMismatch)
            let asText = try await sim.request(.POST, pod, token: token, body: Data("4812".utf8), contentType: "text/plain")
            #expect(asText.status == 415)
        }
    }

    @Test("OTP attempts are limited")
    func otpLock() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            try await sim.advance("task-1001", through: [.ACCEPTED, .ARRIVED_AT_STORE, .PICKED_UP], token: token)
            var codes: [Int] = []
            for code in ["1111", "2222", "3333", "4812"] {
                codes.append(try await sim.json(.POST, BackendPaths.taskPOD("task-1001"), OTPSubmission(value: code), token: token).status)
            }
            #expect(codes == [400, 400, 429, 429])
            #expect(try await sim.stats().otpFailures == 3)
        }
    }

    @Test("photo: multipart upload is checked, hashed, stored and retrievable; mismatched checksums and non-images are refused")
    func photo() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            try await sim.advance("task-1002", through: [.ACCEPTED, .ARRIVED_AT_STORE, .PICKED_UP, .ARRIVED_AT_DESTINATION], token: token)
            let pod = BackendPaths.taskPOD("task-1002")
            let sha = SHA256.hash(data: Self.jpeg).map { String(format: "%02x", $0) }.joined()
            let fields = ["lat": "49.015", "lng": "12.099", "timestamp": "1795000000"]
            let type = "multipart/form-data; boundary=XyZ-boundary"

            let mismatch = try await sim.request(.POST, pod, token: token, body: multipart(Self.jpeg, fields: fields.merging(["sha256": String(repeating: "0", count: 64)]) { $1 }), contentType: type)
            #expect(mismatch.status == 422 && mismatch.error?.code == .checksumMismatch)
            let notImage = try await sim.request(.POST, pod, token: token, body: multipart(Array("hello".utf8), fields: fields), contentType: type)
            #expect(notImage.status == 415)
            let noPosition = try await sim.request(.POST, pod, token: token, body: multipart(Self.jpeg, fields: ["lat": "x"]), contentType: type)
            #expect(noPosition.status == 400)
            let noBoundary = try await sim.request(.POST, pod, token: token, body: Data("x".utf8), contentType: "multipart/form-data")
            #expect(noBoundary.status == 400)

            let stored = try await sim.request(.POST, pod, token: token, body: multipart(Self.jpeg, fields: fields.merging(["sha256": sha]) { $1 }), contentType: type)
            #expect(stored.status == 200)
            #expect(try stored.decode(PODReceipt.self) == PODReceipt(taskId: "task-1002", type: .photo, accepted: true, sha256: sha, bytes: Self.jpeg.count))
            let back = try await sim.request(.GET, "/sim/photos/\(sha)")
            #expect(back.status == 200 && [UInt8](back.body) == Self.jpeg && back.headers["Content-Type"].first == "image/jpeg")
            let view = try await sim.request(.GET, "/sim/tasks/task-1002").decode(SimTaskView.self)
            #expect(view.task.podAccepted && view.photo?.lat == 49.015)
            #expect(try await sim.status("task-1002", .DELIVERED, key: "deliver", token: token).status == 200)
            #expect(try await sim.stats().pods.map(\.type) == [.photo])
        }
    }
}
