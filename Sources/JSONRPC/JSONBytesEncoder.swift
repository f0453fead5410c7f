import FoundationEssentials

/// Encodes a value to the JSON text Foundation's `JSONEncoder` makes with `[.sortedKeys, .withoutEscapingSlashes]`
/// and the default strategies, byte for byte: keys in UTF-8 byte order, a whole `Double` without `.0`, `Data` in
/// base64, `Date` as seconds since 2001, `URL` as its absolute string, non-finite numbers refused.
///
/// Why not Foundation's: it builds a tree of boxed values, casts every value against the types it treats apart and
/// sorts keys through a generic comparison. Encoding was the biggest share of the daemon's instructions in a driver
/// action (36 %; a task view 180,000 instructions, 74,000 here: callgrind, docs/LEAN.md "Action to ack"). Here each
/// value writes its text as it is encoded; an object keeps its members' byte ranges and writes them out sorted once
/// its `encode(to:)` returns.
public enum JSONBytesEncoder {
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        if let direct = value as? any JSONDirectEncodable {
            do {
                try direct.writeJSON(into: &output)
                return output
            } catch {
                // What it cannot write, `Encodable` refuses with the member's path.
                output.removeAll(keepingCapacity: true)
            }
        }
        if try !JSONSink.writeScalar(value, into: &output, path: nil, component: .none) {
            let root = JSONSink(parent: nil, component: .none)
            try value.encode(to: root)
            guard root.kind != nil else {
                throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
            }
            root.finish(into: &output)
        }
        return output
    }
}

/// One value being encoded: the encoder its `encode(to:)` gets, and the object, array or single value it makes.
final class JSONSink: Encoder {
    enum Kind { case object, array, single }

    /// Where the value sits in its parent, for `codingPath` (built only when asked: errors, rare custom coders).
    enum Component {
        case none
        case key(any CodingKey)
        case index(Int)
    }

    /// A member or element: its key (objects) and either its bytes in `bytes` or a nested container.
    struct Item {
        var key: String
        var start: Int
        var end: Int
        var nested: JSONSink?
    }

    /// Unowned: a parent keeps its last child (`spare`); a child is used only while its parent encodes.
    unowned let parent: JSONSink?
    // Not checked for overlapping access at run time (the checks were a tenth of the encoder's instructions): a
    // sink is used by one encode on one thread, and its buffers are never handed out while being written.
    @exclusivity(unchecked) private(set) var component: Component
    @exclusivity(unchecked) var kind: Kind?
    /// The members' or elements' text, back to back (a single value: its text).
    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) var items: [Item] = []
    /// The sink the last member went through, kept for the next (with its buffers): most members are enums and
    /// nested values, and a sink and two arrays for each was most of the allocations.
    @exclusivity(unchecked) private var spare: JSONSink?

    init(parent: JSONSink?, component: Component) {
        self.parent = parent
        self.component = component
    }

    /// A sink for one member's value: the spare one, emptied, unless something still holds it.
    func child(_ component: Component) -> JSONSink {
        guard var reused = spare.take(), isKnownUniquelyReferenced(&reused) else { return JSONSink(parent: self, component: component) }
        reused.component = component
        reused.kind = nil
        reused.bytes.removeAll(keepingCapacity: true)
        reused.items.removeAll(keepingCapacity: true)
        return reused
    }

    /// Writes a member's finished value and keeps its sink for the next.
    func finish(child: JSONSink, into output: inout [UInt8]) {
        child.finish(into: &output)
        spare = child
    }

    var codingPath: [any CodingKey] { Self.codingPath(of: self, then: .none) }

    /// The path to `sink`'s value, then `component` (a member not yet given a sink of its own, for errors).
    static func codingPath(of sink: JSONSink?, then component: Component) -> [any CodingKey] {
        var path: [any CodingKey] = []
        var current = sink
        var next = component
        while true {
            switch next {
            case .none: break
            case .key(let key): path.append(key)
            case .index(let index): path.append(IndexKey(intValue: index))
            }
            guard let sink = current else { break }
            next = sink.component
            current = sink.parent
        }
        return path.reversed()
    }

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        claim(.object)
        return KeyedEncodingContainer(KeyedSink<Key>(sink: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        claim(.array)
        return UnkeyedSink(sink: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        claim(.single)
        return SingleSink(sink: self)
    }

    /// A value asks for one kind of container (again, if it likes: the same one).
    private func claim(_ wanted: Kind) {
        if let kind {
            precondition(kind == wanted, "\(codingPath.map(\.stringValue)): a value asked for two kinds of container")
        } else {
            kind = wanted
            if wanted != .single { items.reserveCapacity(8) }
        }
    }

    // MARK: Writing

    /// Appends `value`'s text as a member (or element) of this container.
    func append<T: Encodable>(_ value: T, key: String, component: Component) throws {
        let start = bytes.count
        if try !Self.writeScalar(value, into: &bytes, path: self, component: component) {
            let child = child(component)
            try value.encode(to: child)
            finish(child: child, into: &bytes)
        }
        items.append(Item(key: key, start: start, end: bytes.count, nested: nil))
    }

    /// Appends a scalar's text as a member (or element).
    func appendText(key: String, _ write: (inout [UInt8]) throws -> Void) rethrows {
        let start = bytes.count
        try write(&bytes)
        items.append(Item(key: key, start: start, end: bytes.count, nested: nil))
    }

    /// A container asked for by name (`nestedContainer`, `superEncoder`), written when this one is.
    func appendNested(key: String, component: Component) -> JSONSink {
        let nested = JSONSink(parent: self, component: component)
        items.append(Item(key: key, start: 0, end: 0, nested: nested))
        return nested
    }

    /// The types Foundation's encoder writes itself rather than through their `encode(to:)`, and the scalars that
    /// reach a generic call (array elements): compared by type, never cast. False: not one of them.
    static func writeScalar<T: Encodable>(_ value: T, into output: inout [UInt8], path: JSONSink?, component: Component) throws -> Bool {
        // Metadata compared by identity: a cast (`as?`) of every value is what made Foundation's encoder slow.
        if T.self == String.self {
            JSONText.writeString(unsafeBitCast(value, to: String.self), into: &output)
        } else if T.self == Int.self {
            JSONText.writeInteger(Int64(unsafeBitCast(value, to: Int.self)), into: &output)
        } else if T.self == Double.self {
            try JSONText.writeDouble(unsafeBitCast(value, to: Double.self), into: &output, path: path, component: component)
        } else if T.self == Bool.self {
            output.append(contentsOf: unsafeBitCast(value, to: Bool.self) ? JSONText.trueText : JSONText.falseText)
        } else if T.self == Data.self {
            JSONText.writeString(unsafeBitCast(value, to: Data.self).base64EncodedString(), into: &output)
        } else if T.self == URL.self {
            JSONText.writeString(unsafeBitCast(value, to: URL.self).absoluteString, into: &output)
        } else if T.self == Decimal.self {
            output.append(contentsOf: unsafeBitCast(value, to: Decimal.self).description.utf8)
        } else {
            return false
        }
        return true
    }

    /// Writes the finished container: an object's members sorted by key (the last of equal keys wins, as in a
    /// dictionary), an array's elements in order. A value that encoded nothing is an empty object.
    func finish(into output: inout [UInt8]) {
        switch kind {
        case nil:
            output.append(contentsOf: JSONText.emptyObject)
        case .single:
            if bytes.isEmpty { output.append(contentsOf: JSONText.emptyObject) } else { output.append(contentsOf: bytes) }
        case .array:
            output.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(item, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object:
            output.append(UInt8(ascii: "{"))
            let order = sortedMembers()
            for (position, index) in order.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSONText.writeString(items[index].key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(items[index], into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private func write(_ item: Item, into output: inout [UInt8]) {
        if let nested = item.nested {
            nested.finish(into: &output)
        } else {
            output.append(contentsOf: bytes[item.start..<item.end])
        }
    }

    /// The members' indices by key in UTF-8 byte order (a stable insertion sort: objects are small), keeping the
    /// last of equal keys.
    private func sortedMembers() -> [Int] {
        // Keys are compared by their first eight bytes, big-endian; in full only on a tie.
        let prefixes = items.map { JSONText.sortPrefix($0.key) }
        func precedes(_ left: Int, _ right: Int) -> Bool {
            prefixes[left] != prefixes[right] ? prefixes[left] < prefixes[right] : JSONText.precedes(items[left].key, items[right].key)
        }
        var order: [Int] = []
        order.reserveCapacity(items.count)
        for index in items.indices {
            var position = order.count
            while position > 0, precedes(index, order[position - 1]) { position -= 1 }
            if position > 0, items[order[position - 1]].key == items[index].key {
                order[position - 1] = index
            } else {
                order.insert(index, at: position)
            }
        }
        return order
    }
}

/// An array element's place in `codingPath`.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

struct KeyedSink<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: JSONSink
    var codingPath: [any CodingKey] { sink.codingPath }

    mutating func encodeNil(forKey key: Key) throws { sink.appendText(key: key.stringValue) { $0.append(contentsOf: JSONText.nullText) } }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        sink.appendText(key: key.stringValue) { $0.append(contentsOf: value ? JSONText.trueText : JSONText.falseText) }
    }
    mutating func encode(_ value: String, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeString(value, into: &$0) } }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try sink.appendText(key: key.stringValue) { try JSONText.writeDouble(value, into: &$0, path: sink, component: .key(key)) }
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try sink.appendText(key: key.stringValue) { try JSONText.writeFloat(value, into: &$0, path: sink, component: .key(key)) }
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeInteger(value, into: &$0) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { sink.appendText(key: key.stringValue) { JSONText.writeUnsigned(value, into: &$0) } }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try sink.append(value, key: key.stringValue, component: .key(key)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        sink.appendNested(key: key.stringValue, component: .key(key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        sink.appendNested(key: key.stringValue, component: .key(key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { sink.appendNested(key: "super", component: .key(SuperKey())) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { sink.appendNested(key: key.stringValue, component: .key(key)) }
}

/// The key `superEncoder()` uses, as Foundation's.
private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}

struct UnkeyedSink: UnkeyedEncodingContainer {
    let sink: JSONSink
    var codingPath: [any CodingKey] { sink.codingPath }
    var count: Int { sink.items.count }

    mutating func encodeNil() throws { sink.appendText(key: "") { $0.append(contentsOf: JSONText.nullText) } }
    mutating func encode(_ value: Bool) throws { sink.appendText(key: "") { $0.append(contentsOf: value ? JSONText.trueText : JSONText.falseText) } }
    mutating func encode(_ value: String) throws { sink.appendText(key: "") { JSONText.writeString(value, into: &$0) } }
    mutating func encode(_ value: Double) throws {
        let index = count
        try sink.appendText(key: "") { try JSONText.writeDouble(value, into: &$0, path: sink, component: .index(index)) }
    }
    mutating func encode(_ value: Float) throws {
        let index = count
        try sink.appendText(key: "") { try JSONText.writeFloat(value, into: &$0, path: sink, component: .index(index)) }
    }
    mutating func encode(_ value: Int) throws { sink.appendText(key: "") { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int8) throws { sink.appendText(key: "") { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int16) throws { sink.appendText(key: "") { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int32) throws { sink.appendText(key: "") { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int64) throws { sink.appendText(key: "") { JSONText.writeInteger(value, into: &$0) } }
    mutating func encode(_ value: UInt) throws { sink.appendText(key: "") { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt8) throws { sink.appendText(key: "") { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt16) throws { sink.appendText(key: "") { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt32) throws { sink.appendText(key: "") { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt64) throws { sink.appendText(key: "") { JSONText.writeUnsigned(value, into: &$0) } }
    mutating func encode<T: Encodable>(_ value: T) throws { try sink.append(value, key: "", component: .index(count)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        sink.appendNested(key: "", component: .index(count)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        sink.appendNested(key: "", component: .index(count)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { sink.appendNested(key: "", component: .index(count)) }
}

/// A single value: its text goes into the sink's bytes (the last one encoded wins).
struct SingleSink: SingleValueEncodingContainer {
    let sink: JSONSink
    var codingPath: [any CodingKey] { sink.codingPath }

    private func replace(_ write: (inout [UInt8]) throws -> Void) rethrows {
        sink.bytes.removeAll(keepingCapacity: true)
        try write(&sink.bytes)
    }

    mutating func encodeNil() throws { replace { $0.append(contentsOf: JSONText.nullText) } }
    mutating func encode(_ value: Bool) throws { replace { $0.append(contentsOf: value ? JSONText.trueText : JSONText.falseText) } }
    mutating func encode(_ value: String) throws { replace { JSONText.writeString(value, into: &$0) } }
    mutating func encode(_ value: Double) throws { try replace { try JSONText.writeDouble(value, into: &$0, path: sink, component: .none) } }
    mutating func encode(_ value: Float) throws { try replace { try JSONText.writeFloat(value, into: &$0, path: sink, component: .none) } }
    mutating func encode(_ value: Int) throws { replace { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int8) throws { replace { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int16) throws { replace { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int32) throws { replace { JSONText.writeInteger(Int64(value), into: &$0) } }
    mutating func encode(_ value: Int64) throws { replace { JSONText.writeInteger(value, into: &$0) } }
    mutating func encode(_ value: UInt) throws { replace { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt8) throws { replace { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt16) throws { replace { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt32) throws { replace { JSONText.writeUnsigned(UInt64(value), into: &$0) } }
    mutating func encode(_ value: UInt64) throws { replace { JSONText.writeUnsigned(value, into: &$0) } }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let sink = sink
        try replace { output in
            if try !JSONSink.writeScalar(value, into: &output, path: sink, component: .none) {
                let child = sink.child(.none)
                try value.encode(to: child)
                sink.finish(child: child, into: &output)
            }
        }
    }
}
