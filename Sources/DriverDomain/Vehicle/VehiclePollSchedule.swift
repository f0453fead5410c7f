/// When the OBD-II reader asks the vehicle what (pure): the bus is polled only as often as the sampling policy
/// needs, because every request wakes the adapter and the car's units, and a parked van's battery must last.
///
/// | mode | speed + RPM | fuel, odometer, run time, voltage | fault codes |
/// |---|---|---|---|
/// | moving | the fix interval (1 s) | a minute | at ignition on, then every 10 minutes |
/// | parked, engine on | a minute | a minute | the same |
/// | ignition off | never | voltage only, a minute | never |
/// | protecting the battery | never | voltage only, every `protectingInterval` (5 × the parked interval, 5 min by default) | never |
public struct VehiclePollSchedule: Sendable, Equatable {
    public enum Mode: Sendable, Equatable {
        case moving(interval: Double)
        case parked
        case ignitionOff
        case protecting
    }

    public enum Query: String, Sendable, CaseIterable, Comparable {
        case speedAndRPM, voltage, fuel, odometer, runTime, faults

        public static func < (lhs: Query, rhs: Query) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    public struct Settings: Sendable, Equatable {
        public var parkedInterval: Double
        public var faultInterval: Double
        public var protectingInterval: Double

        public init(parkedInterval: Double = 60, faultInterval: Double = 600, protectingInterval: Double = 300) {
            self.parkedInterval = parkedInterval
            self.faultInterval = faultInterval
            self.protectingInterval = protectingInterval
        }
    }

    public let settings: Settings
    public private(set) var mode: Mode = .parked
    /// When each query last ran (monotonic seconds).
    private var lastRun: [Query: Double] = [:]

    public init(settings: Settings = Settings()) { self.settings = settings }

    /// The mode for what the daemon knows: battery protection first, then movement (GNSS or the vehicle's speed),
    /// then the engine (unknown counts as on: ask rather than miss a start).
    public static func mode(engineRunning: Bool?, moving: Bool, protecting: Bool, fixInterval: Double) -> Mode {
        if protecting { return .protecting }
        if moving { return .moving(interval: fixInterval) }
        return engineRunning == false ? .ignitionOff : .parked
    }

    /// Switches mode. From ignition off (or protection) to a running engine the fault codes are due at once: a
    /// start is when the check-engine light tells most.
    public mutating func setMode(_ mode: Mode) {
        let wasOff = self.mode == .ignitionOff || self.mode == .protecting
        let isOn = mode != .ignitionOff && mode != .protecting
        if wasOff && isOn { lastRun[.faults] = nil }
        if case .moving = mode, case .moving = self.mode {} else if case .moving = mode {
            // Pulling away: the speed is wanted now, not at the parked interval's end.
            lastRun[.speedAndRPM] = nil
        }
        self.mode = mode
    }

    /// How often `query` runs in the current mode (nil: never).
    public func interval(of query: Query) -> Double? {
        switch (mode, query) {
        case (.protecting, .voltage): settings.protectingInterval
        case (.protecting, _): nil
        case (.ignitionOff, .voltage): settings.parkedInterval
        case (.ignitionOff, _): nil
        case (.moving(let interval), .speedAndRPM): max(0.2, interval)
        case (_, .faults): settings.faultInterval
        default: settings.parkedInterval
        }
    }

    /// The queries due at `now`, in a fixed order (speed first: the safety gate waits for it). When one is due,
    /// whatever would fall due before the mode's next turn (its shortest interval) rides along: one request wakes the
    /// adapter and the car's units once, and the queries keep one rhythm afterwards (after a drive, parked, the
    /// speed's and the minute's queries had fallen out of step: two requests a minute, three seconds apart; the fault
    /// codes ride on the minute's).
    public func due(now: Double) -> [Query] {
        let pending = Query.allCases.compactMap { query in interval(of: query).map { (query, $0, nextDue(query, interval: $0)) } }
        guard pending.contains(where: { $0.2 <= now }), let turn = pending.map(\.1).min() else { return [] }
        return pending.filter { $0.2 < now + turn }.map(\.0)
    }

    /// When `query` is next due (a small tolerance early: timers wake a little late or early).
    private func nextDue(_ query: Query, interval: Double) -> Double {
        lastRun[query].map { $0 + interval - 0.05 } ?? -.infinity
    }

    public mutating func ran(_ query: Query, at now: Double) { lastRun[query] = now }

    /// Seconds until the next query is due (0: now); nil when none ever is.
    public func secondsUntilDue(now: Double) -> Double? {
        Query.allCases.compactMap { query -> Double? in
            guard let interval = interval(of: query) else { return nil }
            return lastRun[query].map { max(0, $0 + interval - now) } ?? 0
        }.min()
    }
}
