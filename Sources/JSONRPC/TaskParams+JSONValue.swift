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
        // A member it does not know goes to `JSONDecoder` (which ignores the unknown and reads a member added to the
        // type since).
        let object = try JSONObjectReader(jsonValue)
        guard object.keys.allSatisfy(Self.directKeys.contains) else { throw JSONDirectRefusal() }
        self.init(taskId: try object.optionalString("taskId"), outsideReason: try object.optionalName("outsideReason"))
    }
}
