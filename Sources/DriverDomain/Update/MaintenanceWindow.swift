/// When a downloaded release may be installed (pure). Never while the van moves, a task is in progress or
/// anything waits for the backend (a status, a proof, an SOS); otherwise off shift, or parked with the ignition
/// off for `quietMinutes`, or inside the daily `hours` (local time).
public struct MaintenanceWindow: Sendable, Equatable, CustomStringConvertible {
    public var quietMinutes: Double
    /// Local hours `[start, end)`; it may wrap midnight (`22-4`). nil: no daily window.
    public var hours: Hours?

    public struct Hours: Sendable, Equatable, CustomStringConvertible {
        public var start: Int
        public var end: Int

        public init(start: Int, end: Int) {
            self.start = start
            self.end = end
        }

        /// `"H-H"`, each from 0 to 23, different; `""` is none.
        public static func parse(_ text: String) -> Hours?? {
            if text.isEmpty { return .some(nil) }
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let start = Int(parts[0]), let end = Int(parts[1]), (0...23).contains(start), (0...23).contains(end), start != end
            else { return nil }
            return .some(Hours(start: start, end: end))
        }

        public func contains(hour: Int) -> Bool { start < end ? (start..<end).contains(hour) : hour >= start || hour < end }

        public var description: String { "\(start)-\(end)" }
    }

    public init(quietMinutes: Double, hours: Hours?) {
        self.quietMinutes = quietMinutes
        self.hours = hours
    }

    public struct Situation: Sendable, Equatable {
        public var onShift: Bool
        public var moving: Bool
        /// Seconds the ignition has been off (nil: on, or not known).
        public var ignitionOffSeconds: Double?
        /// The local hour, 0 to 23.
        public var hour: Int
        public var tasksInProgress: Int
        /// Items waiting for the backend, pings aside.
        public var queuedItems: Int

        public init(onShift: Bool, moving: Bool, ignitionOffSeconds: Double?, hour: Int, tasksInProgress: Int, queuedItems: Int) {
            self.onShift = onShift
            self.moving = moving
            self.ignitionOffSeconds = ignitionOffSeconds
            self.hour = hour
            self.tasksInProgress = tasksInProgress
            self.queuedItems = queuedItems
        }
    }

    public var description: String {
        "off shift, or parked with the ignition off for \(Int(quietMinutes)) min" + (hours.map { ", or between \($0.start):00 and \($0.end):00" } ?? "")
    }

    public enum Decision: Sendable, Equatable {
        case install
        /// Why not now, for `driverctl update` and the log.
        case wait(String)
    }

    public func decide(_ situation: Situation) -> Decision {
        if situation.moving { return .wait("the vehicle is moving") }
        if situation.tasksInProgress > 0 { return .wait("\(situation.tasksInProgress) task(s) in progress") }
        if situation.queuedItems > 0 { return .wait("\(situation.queuedItems) item(s) wait for the backend") }
        if !situation.onShift { return .install }
        if let off = situation.ignitionOffSeconds, off >= quietMinutes * 60 { return .install }
        if let hours, hours.contains(hour: situation.hour) { return .install }
        let window = hours.map { ", or the hours \($0)" } ?? ""
        return .wait("on shift: waits for its end, \(Int(quietMinutes)) min parked with the ignition off\(window)")
    }
}
