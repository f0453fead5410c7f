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

    @Test("500 pings of the longest form fit in 256 KiB, so the ping count is the batch limit that binds")
    func batchBytes() throws {
        // Every field present, negative coordinates and long fractions: the longest JSON a ping can take.
        let ping = LocationPing(
            lat: -89.1234567, lng: -179.1234567, accuracy: 99999.9, speed: 99999.99, heading: 359.9, timestamp: 9_999_999_999.999)
        let batch = LocationBatch(batchId: String(repeating: "f", count: 36), pings: Array(repeating: ping, count: LocationBatch.maxPings))
        let bytes = try JSONEncoder().encode(batch).count
        #expect(bytes < LocationBatch.maxBytes, "\(bytes) bytes")
        #expect(bytes > LocationBatch.maxBytes / 8, "a sanity floor: \(bytes) bytes")
    }

    @Test("a batch carrying earlier ones: each keeps its id, the ack lists theirs, and a request without any reads as before")
    func carriedBatches() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let ping = LocationPing(lat: 1, lng: 2, timestamp: 3)
        let plain = LocationBatch(batchId: "b2", pings: [ping])
        #expect(String(decoding: try encoder.encode(plain), as: UTF8.self) == #"{"batchId":"b2","pings":[{"lat":1,"lng":2,"timestamp":3}]}"#)
        let carrying = LocationBatch(batchId: "b2", pings: [ping], carried: [LocationBatch(batchId: "b1", pings: [ping])])
        #expect(String(decoding: try encoder.encode(carrying), as: UTF8.self)
            == #"{"batchId":"b2","carried":[{"batchId":"b1","pings":[{"lat":1,"lng":2,"timestamp":3}]}],"pings":[{"lat":1,"lng":2,"timestamp":3}]}"#)
        // An ack from a backend that does not know the field has none: the carried batches were not stored.
        let old = try JSONDecoder().decode(BatchAck.self, from: Data(#"{"batchId":"b2","received":1,"unique":1,"duplicate":false}"#.utf8))
        #expect(old.carried == nil)
        let ack = BatchAck(batchId: "b2", received: 1, unique: 1, duplicate: false, carried: [BatchAck(batchId: "b1", received: 1, unique: 0, duplicate: true)])
        #expect(try JSONDecoder().decode(BatchAck.self, from: encoder.encode(ack)) == ack)
        // The ping limit is the whole request's: 500 pings of the longest form in 100 batches still fit the byte limit.
        let longest = LocationPing(
            lat: -89.1234567, lng: -179.1234567, accuracy: 99999.9, speed: 99999.99, heading: 359.9, timestamp: 9_999_999_999.999)
        let each = LocationBatch.maxPings / 100
        let carried = (0..<99).map { LocationBatch(batchId: String(repeating: "\($0 % 10)", count: 36), pings: Array(repeating: longest, count: each)) }
        let full = LocationBatch(batchId: String(repeating: "f", count: 36), pings: Array(repeating: longest, count: each), carried: carried)
        #expect(try encoder.encode(full).count < LocationBatch.maxBytes)
    }

    @Test("stop ids name their task and kind")
    func stopIDs() {
        #expect(Stop.id(taskId: "task-1", kind: .dropoff) == "task-1-dropoff")
        #expect(Stop.parse("task-1-pickup")! == ("task-1", .pickup))
        #expect(Stop.parse("a-b-dropoff")! == ("a-b", .dropoff))
        #expect(Stop.parse("task-1") == nil && Stop.parse("-pickup") == nil && Stop.parse("pickup") == nil && Stop.parse("a-pickups") == nil)
        #expect(Stop.parse("a--dropoff")! == ("a-", .dropoff) && Stop.parse("a-") == nil)
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
        #expect(BackendErrorCode.certificateRequired.httpStatus == 403 && BackendErrorCode.claimRefused.httpStatus == 403)
        #expect(Set(BackendErrorCode.allCases.map(\.httpStatus)).isSubset(of: [400, 401, 403, 404, 409, 413, 415, 422, 426, 429, 500, 503]))
    }
}
