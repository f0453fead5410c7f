import DriverAPI

/// The driving-safety gate of the design brief (§3.5), pure: above the speed limit (4.47 m/s, 10 mph, by
/// default) actions that need the driver's attention wait and interruptive pushes are held. A fix older
/// than `staleAfter` says nothing about now: the speed is unknown, and unknown counts as moving unless the
/// ignition is off.
public struct SafetyGate: Sendable, Equatable {
    public typealias State = SafetyState

    public enum Change: Sendable, Equatable {
        /// The vehicle stands (or the ignition went off): release what was held.
        case opened
        case closed
    }

    public let limit: Double
    public let staleAfter: Double
    /// How long the speed must stay at or below the limit before the vehicle counts as standing: slowing
    /// down for a corner is not pulling over.
    public let settle: Double
    public private(set) var speed: Double?
    /// Since when the live speed has been at or below the limit.
    public private(set) var slowSince: Double?
    public private(set) var fixAt: Double?
    /// How long the last fix speaks for the vehicle: `staleAfter`, or longer when the sampling rate is slow
    /// (a parked unit samples every 10 s or less often and must not read as "unknown" in between).
    public private(set) var fixValidFor: Double
    public private(set) var ignition: Bool?
    /// What the last observation reported (opening can come with time, seen at the next fix).
    private var reportedOpen = false

    public init(limit: Double = 4.47, staleAfter: Double = 10, settle: Double = 3) {
        self.limit = limit
        self.staleAfter = staleAfter
        self.settle = settle
        fixValidFor = staleAfter
    }

    public func state(now: Double) -> State {
        guard let fixAt, now - fixAt <= fixValidFor, speed != nil else { return .unknown }
        guard let slowSince else { return .moving }
        return now - slowSince >= settle ? .stationary : .stopping
    }

    /// Whether attention-needing actions may go ahead now.
    public func isOpen(now: Double) -> Bool {
        switch state(now: now) {
        case .stationary: true
        case .stopping, .moving: false
        case .unknown: ignition == false
        }
    }

    /// A live fix: its speed (nil when the receiver gave none) at `now`; the next fix is due within
    /// `nextFixWithin` seconds (the sampling interval).
    public mutating func observe(speed: Double?, now: Double, nextFixWithin: Double = 0) -> Change? {
        self.speed = speed
        if let speed, speed <= limit {
            if slowSince == nil { slowSince = now }
        } else {
            slowSince = nil
        }
        fixAt = now
        fixValidFor = max(staleAfter, nextFixWithin * 1.5 + 2)
        return report(now: now)
    }

    public mutating func setIgnition(_ ignition: Bool?, now: Double) -> Change? {
        self.ignition = ignition
        return report(now: now)
    }

    private mutating func report(now: Double) -> Change? {
        let open = isOpen(now: now)
        guard open != reportedOpen else { return nil }
        reportedOpen = open
        return open ? .opened : .closed
    }
}
