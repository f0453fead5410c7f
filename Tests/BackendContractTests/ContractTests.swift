import BackendContract
import Foundation
import Testing

@Suite("Backend contract types")
struct ContractTests {
    @Test("polyline: Google's documented example encodes and decodes")
    func polyline() throws {
        let points = [Polyline.Point(lat: 38.5, lng: -120.2), .init(lat: 40.7, lng: -120.95), .init(lat: 43.252, lng: -126.453)]
        #expect(Polyline.encode(points) == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
        #expect(Polyline.decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@") == points)
        #expect(Polyline.decode("_p~iF~ps|U_") == nil)
        #expect(Polyline.decode("") == [])
    }

    @Test("stop ids name their task and kind")
    func stopIDs() {
        #expect(Stop.id(taskId: "task-1", kind: .dropoff) == "task-1-dropoff")
        #expect(Stop.parse("task-1-pickup")! == ("task-1", .pickup))
        #expect(Stop.parse("a-b-dropoff")! == ("a-b", .dropoff))
        #expect(Stop.parse("task-1") == nil && Stop.parse("-pickup") == nil)
        #expect(BackendPaths.isValidTaskID("task-1001") && !BackendPaths.isValidTaskID("a/b") && !BackendPaths.isValidTaskID(""))
    }

    @Test("WebSocket frames have a type and round-trip")
    func frames() throws {
        let up = WSClientMessage.locations(LocationBatch(batchId: "b", pings: [LocationPing(lat: 1, lng: 2, timestamp: 3)]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(up), as: UTF8.self)
            == #"{"batch":{"batchId":"b","pings":[{"lat":1,"lng":2,"timestamp":3}]},"type":"locations"}"#)
        #expect(try JSONDecoder().decode(WSClientMessage.self, from: encoder.encode(up)) == up)
        let hello = try JSONDecoder().decode(WSClientMessage.self, from: Data(#"{"type":"hello","lastPushId":7}"#.utf8))
        #expect(hello == .hello(lastPushId: 7))
        let down = WSServerMessage.push(Push(id: 1, kind: .customerMessage, message: "hi", sentAt: 5))
        #expect(try JSONDecoder().decode(WSServerMessage.self, from: encoder.encode(down)) == down)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(WSServerMessage.self, from: Data(#"{"type":"nope"}"#.utf8)) }
    }

    @Test("error codes carry their HTTP status")
    func errorCodes() {
        #expect(BackendErrorCode.invalidTransition.httpStatus == 409)
        #expect(BackendErrorCode.idempotencyKeyReused.httpStatus == 422)
        #expect(BackendErrorCode.otpInvalid.httpStatus == 400)
        #expect(BackendErrorCode.tokenExpired.httpStatus == 401)
        #expect(Set(BackendErrorCode.allCases.map(\.httpStatus)).isSubset(of: [400, 401, 404, 409, 413, 415, 422, 426, 429, 500, 503]))
    }
}
