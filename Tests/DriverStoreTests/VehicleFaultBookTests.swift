import DriverAPI
import DriverDomain
import Foundation
import Testing
@testable import DriverStore

@Suite("Vehicle fault book")
struct VehicleFaultBookTests {
    @Test("a change is queued and remembered together; reopened, the store still knows what the backend was told")
    func reportOnce() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let misfire = VehicleFault(code: "P0301", pending: false)
        do {
            let store = try Store(directory: directory)
            let book = VehicleFaultBook(store: store)
            #expect(try book.reported().isEmpty)
            let changes = FaultChanges(reported: [], current: [misfire, VehicleFault(code: "P0420", pending: true)])
            let items = changes.appeared.map {
                OutboxItemRecord(kind: .vehicle, taskId: TaskRecord.vehicleLane, idempotencyKey: "k-\($0.code)", payload: Data("{}".utf8), createdAt: 1)
            }
            try book.report(changes, items: items)
            let cleared = FaultChanges(reported: try book.reported(), current: [misfire])
            #expect(cleared.cleared == [VehicleFault(code: "P0420", pending: true)] && cleared.appeared.isEmpty)
            try book.report(cleared, items: [
                OutboxItemRecord(kind: .vehicle, taskId: TaskRecord.vehicleLane, idempotencyKey: "k-clear", payload: Data("{}".utf8), createdAt: 2),
            ])
        }
        let store = try Store(directory: directory)
        #expect(try VehicleFaultBook(store: store).reported() == [misfire])
        #expect(try Outbox(store: store).depth().activity == 3)
    }
}
