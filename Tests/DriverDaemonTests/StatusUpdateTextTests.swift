import BackendContract
@testable import DriverDaemon
import DriverAPI
import Foundation
import JSONRPC
import Testing

/// A status update's body is written directly: the same text Foundation's encoder makes with sorted keys.
@Suite("Status update body text")
struct StatusUpdateTextTests {
    static func foundation(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// Whether no stored property of `value` is nil.
    static func everyMemberSet(_ value: Any) -> Bool {
        Mirror(reflecting: value).children.map { Mirror(reflecting: $0.value) }.allSatisfy { $0.displayStyle != .optional || !$0.children.isEmpty }
    }

    @Test("every member set, none set, and the values in between")
    func sameAsFoundation() throws {
        let full = StatusUpdateRequest(
            status: .deliveryFailed, location: Location(lat: 49.0189512, lng: -12.0, accuracy: 4.5), timestamp: 1_795_852_800.125,
            timeSource: .gps, reason: .customerUnavailable, note: "Klingel defekt / \"Hof\"\n😀", source: .geofence, stopDistance: 212,
            outsideReason: OutsideReason.allCases.last, position: .unknown)
        // Every member set: a member added to the type must be added here, and then to its writer.
        #expect(Self.everyMemberSet(full) && Self.everyMemberSet(full.location!))
        let bare = StatusUpdateRequest(status: .accepted, location: nil, timestamp: 0)
        var noAccuracy = full
        noAccuracy.location = Location(lat: -0.0, lng: 1e-7)
        for request in [full, bare, noAccuracy] {
            #expect(try Codec.encode(request) == (try Self.foundation(request)))
            var written: [UInt8] = []
            try request.writeJSON(into: &written)
            #expect(written == (try Self.foundation(request)))
        }
    }

    @Test("a number JSON cannot hold is refused, as by Encodable")
    func nonFinite() {
        let request = StatusUpdateRequest(status: .delivered, location: Location(lat: .nan, lng: 0), timestamp: 1)
        #expect(throws: EncodingError.self) { try Codec.encode(request) }
    }
}
