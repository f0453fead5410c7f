@testable import DriverDaemon
import Logging
import Testing

@Suite("Log handler")
struct LogHandlerTests {
    @Test("metadata keys become journald field names")
    func fieldNames() {
        #expect(DaemonLogHandler.fieldName("state_dir") == "STATE_DIR")
        #expect(DaemonLogHandler.fieldName("peer-uid") == "PEER_UID")
        #expect(DaemonLogHandler.fieldName("taskId") == "TASKID")
    }

    @Test("levels map to syslog priorities")
    func priorities() {
        #expect(DaemonLogHandler.syslogPriority(.debug) == 7)
        #expect(DaemonLogHandler.syslogPriority(.info) == 6)
        #expect(DaemonLogHandler.syslogPriority(.warning) == 4)
        #expect(DaemonLogHandler.syslogPriority(.critical) == 2)
    }

    @Test("the level is shared and changeable at run time")
    func sharedLevel() {
        let control = LogLevelControl(.info)
        var handler = DaemonLogHandler(label: "a", sink: .stderr, control: control)
        let other = DaemonLogHandler(label: "b", sink: .stderr, control: control)
        handler.logLevel = .debug
        #expect(other.logLevel == .debug)
        #expect(control.set(.error) == .debug)
        #expect(handler.logLevel == .error)
    }

    @Test("message ids are 128-bit hex and distinct")
    func messageIDs() {
        let ids = MessageID.allCases.map(\.rawValue)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }
}
