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

    /// Where a speed came from: the receiver's fixes, or the vehicle's own (OBD-II PID 0D), which needs no sky.
    public enum Source: Sendable, Equatable {
        case gnss, vehicle
    }

    /// One source's latest speed and how long it speaks for the vehicle.
    public struct Evidence: Sendable, Equatable {
        public var speed: Double?
        public var at: Double
        /// Since when this source's speed has been at or below the limit.
        public var slowSince: Double?
        public var validFor: Double

        func isFresh(_ now: Double) -> Bool { speed != nil && now - at <= validFor }
    }

    public let limit: Double
    public let staleAfter: Double
    /// How long the speed must stay at or below the limit before the vehicle counts as standing: slowing
    /// down for a corner is not pulling over.
    public let settle: Double
    /// The latest speed observed, from either source (for messages).
    public private(set) var speed: Double?
    public private(set) var gnss: Evidence?
    /// The vehicle's speed, when an adapter reads it: evidence beside the fixes. With both fresh, either one moving
    /// means moving; with no usable fix (a tunnel, a loading bay) it decides alone.
    public private(set) var vehicle: Evidence?
    public private(set) var ignition: Bool?
    /// What the last observation reported (opening can come with time, seen at the next fix).
    private var reportedOpen = false

    public init(limit: Double = 4.47, staleAfter: Double = 10, settle: Double = 3) {
        self.limit = limit
        self.staleAfter = staleAfter
        self.settle = settle
    }

    public func state(now: Double) -> State {
        let fresh = [gnss, vehicle].compactMap { $0 }.filter { $0.isFresh(now) }
        guard !fresh.isEmpty else { return .unknown }
        var settled = true
        for evidence in fresh {
            guard let slowSince = evidence.slowSince else { return .moving }
            if now - slowSince < settle { settled = false }
        }
        return settled ? .stationary : .stopping
    }

    /// Seconds until a vehicle that is stopping counts as standing, if nothing else is observed (nil: not stopping).
    /// A slow sampler (a parked unit reads a fix every 10 s) must look again then: the gate opens with time, and
    /// the screen would otherwise wait for the next sample to hear it.
    public func settlesIn(now: Double) -> Double? {
        guard state(now: now) == .stopping else { return nil }
        let fresh = [gnss, vehicle].compactMap { $0 }.filter { $0.isFresh(now) }
        return fresh.compactMap { $0.slowSince.map { $0 + settle - now } }.max().map { max(0, $0) }
    }

    /// Whether attention-needing actions may go ahead now.
    public func isOpen(now: Double) -> Bool {
        switch state(now: now) {
        case .stationary: true
        case .stopping, .moving: false
        case .unknown: ignition == false
        }
    }

    /// A live speed from `source` (nil when the receiver gave none) at `now`; the next one is due within
    /// `nextWithin` seconds (the sampling or polling interval). A slow source (a parked unit samples every 10 s
    /// or less often) must not read as "unknown" in between: it speaks for `max(staleAfter, 1.5 × interval + 2)`.
    public mutating func observe(speed: Double?, now: Double, nextFixWithin nextWithin: Double = 0, source: Source = .gnss) -> Change? {
        self.speed = speed
        let previous = source == .gnss ? gnss : vehicle
        var slowSince: Double? = nil
        if let speed, speed <= limit { slowSince = previous?.slowSince ?? now }
        let evidence = Evidence(speed: speed, at: now, slowSince: slowSince, validFor: max(staleAfter, nextWithin * 1.5 + 2))
        if source == .gnss { gnss = evidence } else { vehicle = evidence }
        return report(now: now)
    }

    /// The adapter stopped answering: its last speed says nothing more.
    public mutating func vehicleLost(now: Double) -> Change? {
        vehicle = nil
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
