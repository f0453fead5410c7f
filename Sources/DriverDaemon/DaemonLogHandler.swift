#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain
import Logging
import Synchronization
import SystemdKit

/// The daemon's log level, shared by every logger and changeable at run time (`agent.setLogLevel`).
public final class LogLevelControl: Sendable {
    private let level: Mutex<Logger.Level>

    public init(_ initial: Logger.Level) { level = Mutex(initial) }

    public var current: Logger.Level { level.withLock { $0 } }

    @discardableResult
    public func set(_ new: Logger.Level) -> Logger.Level {
        level.withLock { level in
            defer { level = new }
            return level
        }
    }
}

/// A swift-log handler that writes structured journald entries or plain stderr lines.
///
/// Metadata becomes `DRIVERD_<KEY>` fields in the journal; the `message_id` key becomes `MESSAGE_ID`.
public struct DaemonLogHandler: LogHandler {
    public enum Sink: Sendable { case journal, stderr }

    /// Metadata key that carries a journald `MESSAGE_ID`.
    public static let messageIDKey = "message_id"

    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let sink: Sink
    private let control: LogLevelControl
    private let recentWarnings: RecentWarnings?
    /// Stamps each entry (a journald field of its own) with the trusted time and its source: journald's own
    /// time stamp is the system clock's, which may be years off on a unit without a real-time clock.
    private let clock: DaemonClock?

    init(label: String, sink: Sink, control: LogLevelControl, recentWarnings: RecentWarnings? = nil, clock: DaemonClock? = nil) {
        self.clock = clock
        self.label = label
        self.sink = sink
        self.control = control
        self.recentWarnings = recentWarnings
    }

    public var logLevel: Logger.Level {
        get { control.current }
        set { control.set(newValue) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let stamp = clock?.now()
        if event.level >= .warning, let recentWarnings {
            recentWarnings.record(LogRecord(
                time: stamp?.time ?? WallClock.now(), level: event.level.rawValue, subsystem: label,
                messageID: merged[Self.messageIDKey].map { "\($0)" }, message: "\(event.message)"))
        }
        switch sink {
        case .journal: writeJournal(event, merged, stamp: stamp)
        case .stderr: writeStderr(event, merged)
        }
    }

    private func writeJournal(_ event: LogEvent, _ metadata: Logger.Metadata, stamp: Stamp?) {
        var fields: [(name: String, value: String)] = [
            ("MESSAGE", "\(event.message)"),
            ("PRIORITY", String(Self.syslogPriority(event.level))),
            ("SYSLOG_IDENTIFIER", "driverd"),
            ("CODE_FILE", event.file),
            ("CODE_LINE", String(event.line)),
            ("CODE_FUNC", event.function),
            ("DRIVERD_SUBSYSTEM", label),
        ]
        if let stamp {
            fields.append(("DRIVERD_TIME", TextFormat.fixed(stamp.time, decimals: 3)))
            fields.append(("DRIVERD_TIME_SOURCE", stamp.source.rawValue))
        }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            if key == Self.messageIDKey {
                fields.append(("MESSAGE_ID", "\(value)"))
            } else {
                fields.append(("DRIVERD_" + Self.fieldName(key), "\(value)"))
            }
        }
        do {
            try Journal.send(fields)
        } catch {
            writeStderr(event, metadata)
        }
    }

    private func writeStderr(_ event: LogEvent, _ metadata: Logger.Metadata) {
        var line = "<\(Self.syslogPriority(event.level))>\(label): \(event.message)"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) where key != Self.messageIDKey {
            line += " \(key)=\(value)"
        }
        line += "\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// journald field names: upper-case letters, digits and underscores.
    static func fieldName(_ key: String) -> String {
        String(key.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}

extension Logger.Level {
    init(_ level: LogLevel) {
        self = Logger.Level(rawValue: level.rawValue) ?? .info
    }

    var apiLevel: LogLevel { LogLevel(rawValue: rawValue) ?? .info }
}
