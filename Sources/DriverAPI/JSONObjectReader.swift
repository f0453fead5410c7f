/// A JSON object's members read from its parsed value (`JSONParser`) rather than through `JSONDecoder`, for the values
/// on a driver action's path to its ack: the backend's answer (`StatusAccepted` cost 50,000 instructions through
/// `JSONDecoder`) and the action's params (22,000; docs/LEAN.md, "Action to ack"). What `JSONDecoder` refuses is
/// refused here too: a missing member, a member of the wrong type, a name that is not one of the enum's.
public struct JSONObjectReader {
    private let members: [String: JSONValue]

    public init(parsing text: some Collection<UInt8>) throws {
        try self.init(JSONParser.parse(text))
    }

    public init(_ value: JSONValue) throws {
        guard case .object(let members) = value else { throw Self.corrupted("not a JSON object") }
        self.members = members
    }

    /// The members' names, the ones a reader does not ask for among them.
    public var keys: Dictionary<String, JSONValue>.Keys { members.keys }

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

    /// An optional member: nil when absent or null (as `decodeIfPresent` reads it).
    public func optionalString(_ key: String) throws -> String? {
        members[key] == nil || members[key] == .null ? nil : try string(key)
    }

    public func optionalName<Value: RawRepresentable<String>>(_ key: String, as type: Value.Type = Value.self) throws -> Value? {
        members[key] == nil || members[key] == .null ? nil : try name(key, as: type)
    }

    private func member(_ key: String) throws -> JSONValue {
        guard let value = members[key], value != .null else {
            throw DecodingError.keyNotFound(MemberKey(key), .init(codingPath: [], debugDescription: "no \(key) in the object"))
        }
        return value
    }

    private static func corrupted(_ reason: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: reason))
    }

    private struct MemberKey: CodingKey {
        let stringValue: String
        init(_ key: String) { stringValue = key }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}
