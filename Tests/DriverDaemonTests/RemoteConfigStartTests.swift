@testable import DriverDaemon
import DriverDomain
@testable import DriverStore
import Foundation
import Logging
import SQLiteKit
import Testing

@Suite("A remote configuration's start")
struct RemoteConfigStartTests {
    @Test("a trial whose count of starts cannot be read is given up (a count read as none would never end a crash loop), and the fleet hears ROLLED_BACK")
    func unreadableStarts() throws {
        let (store, directory) = try SetAsideTests.store()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let book = RemoteConfigBook(store: store)
        let document = RemoteConfigDocument(version: 4, settings: ["arrival.radius": .integer(140)])
        try book.beginTrial(RemoteConfigRecord(
            version: 4, payload: try JSONEncoder().encode(document), signature: "signed", state: .trial, receivedAt: 1))
        let clock = DaemonClock()
        let layers = ConfigLayers(file: [:])

        // Readable: the trial runs, and its start is counted.
        let first = try RemoteConfigStart.resolve(book: book, layers: layers, clock: clock, logger: Logger(label: "test"))
        #expect(first.running == 4 && first.onTrial)

        try store.pool.write { db in try db.execute(sql: "UPDATE remote_config SET starts = 'not a list' WHERE version = 4") }
        let second = try RemoteConfigStart.resolve(book: book, layers: layers, clock: clock, logger: Logger(label: "test"))
        #expect(second.running == nil && !second.onTrial)
        #expect(try book.snapshot().trial == nil)
        let answers = try Outbox(store: store).pendingItems(taskId: TaskRecord.configLane)
        let answer = try #require(answers.first)
        #expect(answers.count == 1 && answer.idempotencyKey.hasPrefix("config-v4-rolled_back"), "\(answers.map(\.idempotencyKey))")
        #expect(String(decoding: answer.payload, as: UTF8.self).contains("count of starts cannot be read"))
    }
}
