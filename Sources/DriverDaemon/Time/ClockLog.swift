import DriverAPI
import Logging

/// What the journal says about the clock: where stamps come from at start and every change of that source
/// (the uplink reads its tokens' ages anew then), and a warning if the kernel's state cannot be read.
enum ClockLog {
    static let logger = Logger(label: "clock")

    static func start(_ clock: DaemonClock, uplink: Uplink?) {
        clock.whenSourceChanges { from, to, offset in
            uplink?.clockSourceChanged()
            if let from { log(to, was: from, offset: offset) }
        }
        if let problem = DaemonClock.kernelStateUnreadable() {
            logger.warning("cannot read whether the system clock is synchronised (\(problem)): stamps come from GPS time when it is known")
        }
        let status = clock.status()
        log(status.source, was: nil, offset: status.systemClockOffset)
    }

    private static func log(_ source: TimeSource, was: TimeSource?, offset: Double) {
        logger.log(
            level: was == nil ? .info : .notice,
            "time stamps come from \(source.rawValue)\(was.map { " (was \($0.rawValue))" } ?? ""); the system clock is \(TextFormat.fixed(offset, decimals: 1)) s off",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.clockSource.rawValue)", "time_source": "\(source.rawValue)",
                       "system_clock_offset": "\(TextFormat.fixed(offset, decimals: 1))"])
    }
}
