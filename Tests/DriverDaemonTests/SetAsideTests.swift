@testable import DriverDaemon
import DriverDomain
@testable import DriverStore
import Foundation
import Logging
import SQLiteKit
import Testing

@Suite("Stored state that cannot be read is set aside, never written over")
struct SetAsideTests {
    static func store() throws -> (Store, String) {
        var template = Array("/tmp/driverd-setaside-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        return (try Store(directory: directory), directory)
    }

    @Test("a travel state whose trip rules do not decode: the row is copied aside whole, the odometer starts from zero, and the next save does not touch the copy", arguments: [
        "UPDATE travel_state SET trip_rules = X'7B226E6F74223A2274726970227D'",  // {"not":"trip"}
        "UPDATE travel_state SET metres = 'a lot'",
    ])
    func travelState(damage: String) throws {
        let (store, directory) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let book = TravelBook(store: store)
        var record = TravelRecord()
        record.metres = 48_213.5
        record.shiftTrips = 7
        try book.save(record)
        try store.pool.write { db in try db.execute(sql: damage) }
        #expect(throws: (any Error).self) {
            let stored = try book.read()
            _ = try stored.tripRules.map { try JSONDecoder().decode(TripDetector.self, from: $0) }
        }

        let monitor = TravelMonitor(book: book, recorder: nil, idleSeconds: 300, shiftStartedAt: 1000, logger: Logger(label: "test"))
        let (count, rows) = try store.setAsideRows()
        #expect(count == 1)
        let row = try #require(rows.first)
        #expect(row.tableName == "travel_state" && row.reason.hasPrefix("unreadable"))
        // Every column as it was, the damaged one included.
        #expect((row.rowText.contains("\"metres\":\"48213.5\"") || row.rowText.contains("\"metres\":\"'a lot'\""))
            && row.rowText.contains("\"shift_trips\":\"7\""), "\(row.rowText)")
        // The daemon goes on: a fresh state, stored in its place (the shift's start), the copy untouched.
        #expect(try book.read().metres == 0 && book.read().shiftStartedAt == 1000)
        #expect(monitor.odometerDisagreements == 0)
        #expect(try store.setAsideRows().newest == rows)
        // A readable state is left where it is.
        _ = TravelMonitor(book: book, recorder: nil, idleSeconds: 300, shiftStartedAt: 1000, logger: Logger(label: "test"))
        #expect(try store.setAsideRows().count == 1)
    }
}
