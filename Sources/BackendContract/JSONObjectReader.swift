import DriverAPI

/// An answer's members read from its parsed text (`JSONParser`) rather than through `JSONDecoder`, for the replies on
/// a driver action's path to its ack (decoding `StatusAccepted` cost 50,000 instructions; docs/LEAN.md, "Action to
/// ack"). What `JSONDecoder` refuses is refused here too: a missing member, a member of the wrong type, a name that is
/// not one of the enum's; members it does not know are ignored, as `Decodable` ignores them.
public struct JSONObjectReader {
    private let members: [String: JSONValue]

    public init(parsing text: some Collection<UInt8>) throws {
        guard case .object(let members) = try JSONParser.parse(text) else { throw Self.corrupted("the answer is not a JSON object") }
        self.members = members
    }

    public func string(_ key: String) throws -> String {
        guard case .string(let value) = try member(key) else { throw Self.corrupted("\(key) is not a string") }
        return value
    }

    public func number(_ key: String) throws -> Double {
        guard case .number(let text) = try member(key), let value = Double(text), value.isFinite else {
            throw Self.corrupted("\(key) is not a number")
        }
        return value
    }

    /// A `String`-backed enum by its raw value.
    public func name<Value: RawRepresentable<String>>(_ key: String, as type: Value.Type = Value.self) throws -> Value {
        guard let value = Value(rawValue: try string(key)) else { throw Self.corrupted("\(key) is not a known \(Value.self)") }
        return value
    }

    private func member(_ key: String) throws -> JSONValue {
        guard let value = members[key], value != .null else {
            throw DecodingError.keyNotFound(AnswerKey(key), .init(codingPath: [], debugDescription: "no \(key) in the answer"))
        }
        return value
    }

    private static func corrupted(_ reason: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: reason))
    }

    private struct AnswerKey: CodingKey {
        let stringValue: String
        init(_ key: String) { stringValue = key }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

extension StatusAccepted {
    /// The answer's text read directly (`JSONObjectReader`): the same value `JSONDecoder` gives, or an error where it
    /// gives one.
    public init(jsonText: some Collection<UInt8>) throws {
        let object = try JSONObjectReader(parsing: jsonText)
        self.init(
            taskId: try object.string("taskId"), status: try object.name("status"), previousStatus: try object.name("previousStatus"),
            idempotencyKey: try object.string("idempotencyKey"), acceptedAt: try object.number("acceptedAt"))
    }
}
