/// A type that writes its JSON text itself: the bytes its `Encodable` conformance gives `JSONBytesEncoder`, made
/// without the `Encoder` protocol's containers, boxes and key sorting. For the few values on a driver action's path
/// to the backend's ack (a task view cost 97,000 instructions through `Encodable`; docs/LEAN.md, "Action to ack").
/// Each conformance is compared byte for byte with Foundation's encoder in the tests.
public protocol JSONDirectEncodable: Encodable {
    /// Appends the value's text; throws for what the generic path must handle (a number JSON has no text for).
    func writeJSON(into output: inout [UInt8]) throws
}

/// A value JSON cannot hold: `JSONBytesEncoder` then encodes through `Encodable`, which names the member.
public struct JSONDirectRefusal: Error {
    public init() {}
}

/// One JSON object's members, written in the order they are given: UTF-8 key order, the order `Codec` sorts keys
/// to (checked in debug builds). A nil optional is left out, as a synthesized `encodeIfPresent` does.
public struct JSONObjectWriter {
    var output: [UInt8] = []
    private var members = 0
    private var lastKey: StaticString?

    /// Writes an object into `output`: `{`, what `body` adds, `}`.
    public static func write(into output: inout [UInt8], _ body: (inout JSONObjectWriter) throws -> Void) throws {
        var writer = JSONObjectWriter()
        swap(&writer.output, &output)
        defer { swap(&writer.output, &output) }
        writer.output.append(UInt8(ascii: "{"))
        try body(&writer)
        writer.output.append(UInt8(ascii: "}"))
    }

    /// `"key":`, after a comma unless it is the first member. Keys are plain ASCII names: nothing to escape.
    private mutating func key(_ key: StaticString) {
        assert(lastKey.map { Self.ascending($0, key) } ?? true, "\(key) written after \(lastKey!): keys must be in UTF-8 order")
        lastKey = key
        if members > 0 { output.append(UInt8(ascii: ",")) }
        members += 1
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
    }

    public mutating func string(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        self.key(key)
        JSONText.writeString(value, into: &output)
    }

    public mutating func number(_ key: StaticString, _ value: Double?) throws {
        guard let value else { return }
        guard value.isFinite else { throw JSONDirectRefusal() }
        self.key(key)
        try JSONText.writeDouble(value, into: &output, path: nil, component: .none)
    }

    /// A `String`-backed enum, as its raw value.
    public mutating func name<Value: RawRepresentable<String>>(_ key: StaticString, _ value: Value?) {
        string(key, value?.rawValue)
    }

    public mutating func names<Value: RawRepresentable<String>>(_ key: StaticString, _ values: [Value]) {
        self.key(key)
        output.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            JSONText.writeString(value.rawValue, into: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// A nested object, left out when nil.
    public mutating func object<Value: JSONDirectEncodable>(_ key: StaticString, _ value: Value?) throws {
        guard let value else { return }
        self.key(key)
        try value.writeJSON(into: &output)
    }

    public mutating func objects<Value: JSONDirectEncodable>(_ key: StaticString, _ values: [Value]) throws {
        self.key(key)
        output.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            try value.writeJSON(into: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    private static func ascending(_ left: StaticString, _ right: StaticString) -> Bool {
        let l = UnsafeBufferPointer(start: left.utf8Start, count: left.utf8CodeUnitCount)
        let r = UnsafeBufferPointer(start: right.utf8Start, count: right.utf8CodeUnitCount)
        return l.lexicographicallyPrecedes(r)
    }
}
