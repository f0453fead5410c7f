/// Protects the vehicle's 12 V battery from the unit (pure): with the engine off and the supply below `threshold`
/// for `holdSeconds`, protection begins (the daemon stops polling the bus, releases the GPS receiver, reports it
/// once, and may power the unit off). Never while the engine runs or an SOS waits. It ends when the engine runs
/// or the voltage is back above the threshold by a margin (a charger, a jump start).
public struct BatteryGuard: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        case protect
        case release
    }

    public let threshold: Double
    public let holdSeconds: Double
    /// Volts above the threshold that end protection: a sagging battery recovers a little once the load is gone.
    public let recoveryMargin: Double
    public private(set) var lowSince: Double?
    public private(set) var protectingSince: Double?

    public init(threshold: Double = 11.8, holdSeconds: Double = 300, recoveryMargin: Double = 0.5) {
        self.threshold = threshold
        self.holdSeconds = holdSeconds
        self.recoveryMargin = recoveryMargin
    }

    public var isProtecting: Bool { protectingSince != nil }

    public mutating func observe(voltage: Double, engineRunning: Bool?, sosWaiting: Bool, now: Double) -> Action? {
        if engineRunning == true {
            lowSince = nil
            return endProtection()
        }
        if voltage < threshold {
            let since = lowSince ?? now
            lowSince = since
            guard protectingSince == nil, !sosWaiting, now - since >= holdSeconds else { return nil }
            protectingSince = now
            return .protect
        }
        lowSince = nil
        return voltage >= threshold + recoveryMargin ? endProtection() : nil
    }

    private mutating func endProtection() -> Action? {
        guard protectingSince != nil else { return nil }
        protectingSince = nil
        return .release
    }
}
