@testable import DriverDaemon
import DriverStore
import Foundation
import Logging
import Testing

@Suite("Push polling while the WebSocket is down")
struct PushInboxTests {
    @Test("without a WebSocket ever open, a poll every 30 s; a socket that closed is polled for only after 5 s down (its reconnect catches up first); pushes passed over are polled for at once")
    func pollDue() throws {
        var template = Array("/tmp/driverd-pushinbox-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        defer {
            // Expected answer: a scratch directory left in /tmp harms no result.
            try? FileManager.default.removeItem(atPath: directory)
        }
        let inbox = PushInbox(store: try Store(directory: directory), driver: "drv-1", logger: Logger(label: "test"))
        // Never open: polled at once, then every 30 s.
        #expect(inbox.pollDue(now: 100, socketOpen: false) == 0)
        #expect(inbox.pollDue(now: 120, socketOpen: false) == nil)
        #expect(inbox.pollDue(now: 130, socketOpen: false) == 0)
        // Open: no poll.
        #expect(inbox.pollDue(now: 200, socketOpen: true) == nil)
        // Closed at 300 (a lost frame): the reconnect's catch-up brings what a poll would, for 5 s.
        inbox.socketClosed(now: 300)
        #expect(inbox.pollDue(now: 301, socketOpen: false) == nil)
        #expect(inbox.pollDue(now: 304.9, socketOpen: false) == nil)
        #expect(inbox.pollDue(now: 305, socketOpen: false) == 0)
        #expect(inbox.pollDue(now: 320, socketOpen: false) == nil, "then every 30 s")
        // Pushes passed over that could not be fetched: a poll even with the socket open.
        inbox.fellBehind()
        #expect(inbox.pollDue(now: 340, socketOpen: true) == 0)
        inbox.caughtUp()
        #expect(inbox.pollDue(now: 400, socketOpen: true) == nil)
    }
}
