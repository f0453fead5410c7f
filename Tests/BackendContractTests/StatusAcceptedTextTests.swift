import BackendContract
import DriverAPI
import Foundation
import Testing

/// `StatusAccepted(jsonText:)` reads what `JSONDecoder` reads, and refuses what it refuses.
@Suite("StatusAccepted read from its text")
struct StatusAcceptedTextTests {
    static func decoded(_ text: String) -> StatusAccepted? { try? JSONDecoder().decode(StatusAccepted.self, from: Data(text.utf8)) }
    static func read(_ text: String) -> StatusAccepted? { try? StatusAccepted(jsonText: Data(text.utf8)) }

    @Test("the backend's own answer, and other spellings of it, read as JSONDecoder reads them")
    func sameAsDecoder() throws {
        let accepted = StatusAccepted(
            taskId: "task-1001", status: .arrivedAtDestination, previousStatus: .pickedUp, idempotencyKey: "0f8e-ü", acceptedAt: 1_795_852_800.25)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let texts = [
            String(decoding: try encoder.encode(accepted), as: UTF8.self),
            #"{"acceptedAt":1795852800,"idempotencyKey":"k","previousStatus":"ACCEPTED","status":"ARRIVED_AT_STORE","taskId":"t"}"#,
            #" { "taskId" : "t\u00e9\n" , "status":"DELIVERED","previousStatus":"ARRIVED_AT_DESTINATION","#
                + #""idempotencyKey":"k","acceptedAt":1.7958528e9,"extra":{"nested":[1,null]},"note":null } "#,
            #"{"taskId":"t","status":"CANCELLED","previousStatus":"ASSIGNED","idempotencyKey":"","acceptedAt":-0.5}"#,
        ]
        for text in texts {
            let expected = try #require(Self.decoded(text), "\(text)")
            #expect(Self.read(text) == expected, "\(text)")
        }
        #expect(Self.read(texts[0]) == accepted)
    }

    @Test("what JSONDecoder refuses is refused", arguments: [
        #"{"status":"DELIVERED","previousStatus":"ACCEPTED","idempotencyKey":"k","acceptedAt":1}"#,
        #"{"taskId":"t","status":"DELIVERED_LATER","previousStatus":"ACCEPTED","idempotencyKey":"k","acceptedAt":1}"#,
        #"{"taskId":"t","status":"DELIVERED","previousStatus":"ACCEPTED","idempotencyKey":"k","acceptedAt":"1"}"#,
        #"{"taskId":null,"status":"DELIVERED","previousStatus":"ACCEPTED","idempotencyKey":"k","acceptedAt":1}"#,
        #"{"taskId":7,"status":"DELIVERED","previousStatus":"ACCEPTED","idempotencyKey":"k","acceptedAt":1}"#,
        #"[{"taskId":"t","status":"DELIVERED","previousStatus":"ACCEPTED","idempotencyKey":"k","acceptedAt":1}]"#,
        #"{"taskId":"t","status":"DELIVERED","previousStatus":"ACCEPTED","idempotencyKey":"k","acceptedAt":1"#,
        "",
    ])
    func refused(_ text: String) {
        #expect(Self.decoded(text) == nil)
        #expect(throws: (any Error).self) { try StatusAccepted(jsonText: Data(text.utf8)) }
    }
}
