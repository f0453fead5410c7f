import DriverAPI

/// A type read straight from a parsed JSON value, as `JSONDecoder` would read its text; it throws for anything it does
/// not take as is, and `Codec` then asks `JSONDecoder`, whose error names the problem. For the params on a driver
/// action's path (written back to text and decoded, `TaskParams` cost 22,000 instructions; docs/LEAN.md).
protocol JSONValueDecodable: Decodable {
    init(jsonValue: JSONValue) throws
}

/// The params of `task.accept`, `task.arrive`, `task.pickup` and `task.deliver`.
extension TaskParams: JSONValueDecodable {
    static let directKeys: Set<String> = ["taskId", "outsideReason"]

    init(jsonValue: JSONValue) throws {
        // Null is an absent optional. A member it does not know goes to `JSONDecoder` (which ignores the unknown and
        // reads a member added to the type since).
        guard case .object(let members) = jsonValue, members.keys.allSatisfy(Self.directKeys.contains) else { throw JSONDirectRefusal() }
        var taskId: String?
        switch members["taskId"] {
        case nil, .null?: taskId = nil
        case .string(let value)?: taskId = value
        default: throw JSONDirectRefusal()
        }
        var outsideReason: OutsideReason?
        switch members["outsideReason"] {
        case nil, .null?: outsideReason = nil
        case .string(let value)?:
            guard let reason = OutsideReason(rawValue: value) else { throw JSONDirectRefusal() }
            outsideReason = reason
        default: throw JSONDirectRefusal()
        }
        self.init(taskId: taskId, outsideReason: outsideReason)
    }
}
