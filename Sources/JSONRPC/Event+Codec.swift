import DriverAPI

extension Event {
    /// A notification's params as this event's payload.
    public func decode(_ params: [UInt8]) throws -> Payload { try Codec.decode(Payload.self, from: params) }

    public func decode(_ params: JSONValue) throws -> Payload { try Codec.decode(Payload.self, from: params) }
}
