import DriverAPI
import Foundation
@testable import JSONRPC
import Testing

/// `Codec.decode(_:from: JSONValue)` decodes params already parsed by the framing: the same values as
/// `JSONDecoder` reading the text, and its errors where it refuses.
@Suite("Codec decoding parsed values")
struct CodecDecodeTests {
    /// The value, or the error's description.
    enum Outcome: Equatable {
        case value(TaskParams)
        case error(String)
    }

    static func viaText(_ value: JSONValue) -> Outcome {
        do { return .value(try JSONDecoder().decode(TaskParams.self, from: Data(JSONWriter.bytes(value)))) } catch { return .error("\(error)") }
    }

    static func viaCodec(_ value: JSONValue) -> Outcome {
        do { return .value(try Codec.decode(TaskParams.self, from: value)) } catch { return .error("\(error)") }
    }

    @Test("task params: every form a client may send reads as JSONDecoder reads it", arguments: [
        JSONValue.object([:]), .object(["taskId": .string("task-1001")]), .object(["taskId": .null]),
        .object(["taskId": .string("t\u{e9}\n\"x"), "outsideReason": .string(OutsideReason.allCases[0].rawValue)]),
        .object(["taskId": .string("t"), "outsideReason": .null, "unknown": .array([.number("1")])]),
        // Refused: JSONDecoder's error is the one told.
        .object(["taskId": .number("7")]), .object(["taskId": .bool(true)]), .object(["outsideReason": .string("bored")]),
        .object(["outsideReason": .number("1")]), .array([]), .string("task-1001"), .null,
    ])
    func taskParams(_ value: JSONValue) {
        let expected = Self.viaText(value)
        #expect(Self.viaCodec(value) == expected)
    }
}
