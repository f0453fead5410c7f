import DriverAPI
import Foundation
import JSONRPC
import Testing

/// `JSONBytesEncoder` must write exactly what Foundation's `JSONEncoder` writes with the daemon's options: every
/// case here is compared with it byte for byte.
@Suite("JSON bytes encoder")
struct JSONBytesEncoderTests {
    static func foundation(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func same(_ value: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = String(decoding: try JSONBytesEncoder.encode(value), as: UTF8.self)
        #expect(ours == (try foundation(value)), sourceLocation: sourceLocation)
    }

    struct Record: Codable {
        enum Kind: String, Codable { case one, two }
        var name: String
        var count: Int
        var ratio: Double
        var flag: Bool
        var kind: Kind
        var note: String?
        var tags: [String]
        var nested: [String: [Int?]]
        var stamp: Date
        var blob: Data
        var link: URL?
        var small: Float
        var bytes: [UInt8]
        var wide: Int64
        var unsigned: UInt64
    }

    static let record = Record(
        name: "Dachauplatz 4 / Regensburg \"Süd\"", count: -42, ratio: 0.1, flag: true, kind: .two, note: nil,
        tags: ["a", "", "é😀"], nested: ["z": [1, nil, 3], "A": [], "_": [nil]], stamp: Date(timeIntervalSince1970: 1_795_852_800.25),
        blob: Data([0, 1, 254, 255, 62, 63]), link: URL(string: "https://fleet.example.com/a b?q=1&r=/x"), small: 0.1,
        bytes: [1, 2, 3], wide: .min, unsigned: .max)

    @Test func records() throws {
        try Self.same(Self.record)
        var other = Self.record
        other.note = "line\nbreak\ttab\r\u{08}\u{0C}\u{0B}\u{00}\u{1F}\u{7F}\u{2028}\\"
        other.link = nil
        try Self.same(other)
        try Self.same([Self.record, other])
        try Self.same(["first": Self.record])
    }

    @Test func topLevelValues() throws {
        try Self.same("a/b")
        try Self.same(1)
        try Self.same(-0.0)
        try Self.same(true)
        try Self.same(Optional<Int>.none)
        try Self.same([Int?.none, 2])
        try Self.same([String: Int]())
        try Self.same([Int]())
        try Self.same([2: "two", 10: "ten"])
        try Self.same(Decimal(string: "12.50")!)
    }

    @Test func keysInByteOrder() throws {
        try Self.same(["b": 1, "B": 2, "a10": 3, "a9": 4, "_x": 5, "A": 6, "é": 7, "z": 8, "ab": 9, "a": 10, "Ab": 11, "": 12, "aé": 13, "ae": 14])
        // Keys alike in their first eight bytes (the sort compares those first).
        try Self.same(["abcdefgh1": 1, "abcdefgh": 2, "abcdefgh0": 3, "abcdefghZ": 4, "abcdefg": 5, "abcdefgé": 6, "abcdefgh\u{0}": 7])
    }

    @Test func numbers() throws {
        let doubles: [Double] = [
            0, -0.0, 1, -1, 0.1, 1e-7, 1e21, 1e16, 1e15, 9_007_199_254_740_993, 123_456_789_012_345_678, 5e-324, .greatestFiniteMagnitude,
            -.greatestFiniteMagnitude, 100, 2.5, 0.000001, 1e-5, 12345.678, 1_795_852_800.5, 49.0189, 12.0927, -0.5, 1e100, 1e-100,
        ]
        try Self.same(doubles)
        var generator = SystemRandomNumberGenerator()
        var random: [Double] = []
        while random.count < 2_000 {
            let value = Double(bitPattern: generator.next())
            if value.isFinite { random.append(value) }
        }
        random += (0..<500).map { _ in Double(Int.random(in: -1_000_000...1_000_000)) / [1, 10, 100, 1000][Int.random(in: 0..<4)] }
        try Self.same(random)
        try Self.same([Float(1.5), 1e-8, 3, 0.1, -0.0, .greatestFiniteMagnitude])
        try Self.same([Int.min, Int.max, 0, -1])
        try Self.same([Int8.min, Int8.max])
        try Self.same([UInt32.max])
    }

    @Test func nonFiniteNumbersAreRefused() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try JSONBytesEncoder.encode(["x": value]) }
            #expect(throws: EncodingError.self) { try JSONBytesEncoder.encode([value]) }
        }
        #expect(throws: EncodingError.self) { try JSONBytesEncoder.encode(Float.nan) }
    }

    struct Empty: Codable {}

    struct EncodesNothing: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    /// A coder that uses what synthesised ones never do: nested containers written after later members, a super
    /// encoder, the same key twice (the last wins, as in Foundation's dictionary).
    struct Handwritten: Encodable {
        enum Keys: String, CodingKey { case outer, list, repeated, zeta, alpha }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var outer = container.nestedContainer(keyedBy: Keys.self, forKey: .outer)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try container.encode(1, forKey: .repeated)
            try outer.encode("late", forKey: .zeta)
            try list.encode(1)
            var inner = list.nestedContainer(keyedBy: Keys.self)
            try list.encodeNil()
            try inner.encode(true, forKey: .alpha)
            try container.encode(2, forKey: .repeated)
            try Empty().encode(to: container.superEncoder())
            try container.encode([Empty()], forKey: .alpha)
            var single = container.superEncoder(forKey: .zeta).singleValueContainer()
            try single.encode(3.0)
        }
    }

    @Test func unusualCoders() throws {
        try Self.same(Empty())
        try Self.same([EncodesNothing()])
        try Self.same(["key": EncodesNothing()])
        try Self.same(Handwritten())
        #expect(throws: EncodingError.self) { try JSONBytesEncoder.encode(EncodesNothing()) }
    }

    @Test func jsonValues() throws {
        let value = JSONValue.object([
            "id": .number("7"), "list": .array([.null, .bool(false), .string("x\u{01}")]), "nested": .object(["k": .number("1.50")]),
        ])
        try Self.same(value)
    }

    @Test func errorPathNamesTheMember() throws {
        struct Holder: Encodable { var values: [String: [Double]] }
        do {
            _ = try JSONBytesEncoder.encode(Holder(values: ["speeds": [1, .nan]]))
            Issue.record("a NaN was encoded")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["values", "speeds", "Index 1"])
        }
    }

    /// Whether no stored property of `value` is nil.
    static func everyMemberSet(_ value: Any) -> Bool {
        Mirror(reflecting: value).children.map { Mirror(reflecting: $0.value) }.allSatisfy { $0.displayStyle != .optional || !$0.children.isEmpty }
    }

    /// Task views are written directly, not through `Encodable`: every member, set and unset, in the same text.
    @Test func taskViewsWrittenDirectly() throws {
        let pickup = StopView(
            id: "t-1-pickup", taskId: "t-1", kind: .pickup, status: .pickedUp, address: "Haidplatz 8, \"Alt\"/Stadt\n", name: "Café é😀",
            phone: "+49 941 000001", lat: 49.021, lng: 12.0)
        let dropoff = StopView(
            id: "t-1-dropoff", taskId: "t-1", kind: .dropoff, status: .enRoute, address: "", name: "\u{01}\\", phone: "", lat: -0.0, lng: 1e-7)
        let full = TaskView(
            id: "t-1", status: .deliveryFailed, backendStatus: .pickedUp, sync: .pending, podType: "PHOTO", pod: .captured,
            failureReason: .customerUnavailable, allowedActions: [.returnToVendor, .arrive], primaryAction: .arrivedAtDestination,
            stops: [pickup, dropoff], updatedAt: 1_795_852_800.25, distanceMeters: 1234)
        // Every member set: a member added to the type must be added here, and then to its writer.
        #expect(Self.everyMemberSet(full) && Self.everyMemberSet(pickup))
        var bare = full
        bare.failureReason = nil
        bare.primaryAction = nil
        bare.distanceMeters = nil
        bare.allowedActions = []
        bare.stops = []
        bare.updatedAt = 0
        for view in [full, bare] {
            try Self.same(view)
            // Inside other values it goes through `Encodable`: the same text either way.
            try Self.same([view])
        }
        for status in TaskStatus.allCases {
            var view = full
            view.status = status
            view.backendStatus = status
            try Self.same(view)
        }
    }

    @Test func taskViewWithANonFiniteNumberIsRefusedByName() throws {
        var view = TaskView(
            id: "t-2", status: .accepted, backendStatus: .assigned, sync: .synced, podType: "OTP", pod: .none, failureReason: nil,
            allowedActions: [], primaryAction: nil, stops: [], updatedAt: 1, distanceMeters: .nan)
        do {
            _ = try JSONBytesEncoder.encode(view)
            Issue.record("a NaN was encoded")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["distanceMeters"])
        }
        view.distanceMeters = nil
        view.stops = [StopView(id: "s", taskId: "t-2", kind: .pickup, status: .pending, address: "", name: "", phone: "", lat: .infinity, lng: 0)]
        #expect(throws: EncodingError.self) { try JSONBytesEncoder.encode(view) }
    }
}
