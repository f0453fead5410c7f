/// A value with its JSON text (`Codec`), made once and used as is: a driver action's task view is both its reply
/// and its `task.changed` notification, encoded once, on the blocking pool's thread that syncs the disk.
public struct EncodedJSON<Value: Encodable & Sendable>: Sendable {
    public let value: Value
    public let bytes: [UInt8]

    public init(_ value: Value) throws {
        self.value = value
        bytes = try Codec.encode(value)
    }
}
