import DriverAPI
import DriverDomain

/// `POST /api/v1/rider/vehicle-events`, sent with an `Idempotency-Key` header (its id): what the vehicle's OBD-II
/// adapter showed that maintenance wants the same day: a fault code that appeared or cleared, and the vehicle's
/// battery running low while parked (the unit then rests).
public struct VehicleEventReport: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, Equatable {
        case faultAppeared = "FAULT_APPEARED"
        case faultCleared = "FAULT_CLEARED"
        case batteryLow = "BATTERY_LOW"
    }

    public var eventId: String
    public var kind: Kind
    public var observedAt: Double
    /// Faults: the SAE J2012 code, whether it is pending (mode 07) rather than stored (mode 03), the generic
    /// description where one is known, and the check-engine light.
    public var code: String?
    public var pending: Bool?
    public var description: String?
    public var checkEngine: Bool?
    /// The supply voltage at the adapter (battery reports; faults when known).
    public var voltage: Double?
    /// The vehicle's own odometer, km, when it reports one.
    public var odometerKm: Double?
    public var location: Location?
    public var timeSource: TimeSource?

    public init(
        eventId: String, kind: Kind, observedAt: Double, code: String? = nil, pending: Bool? = nil, description: String? = nil,
        checkEngine: Bool? = nil, voltage: Double? = nil, odometerKm: Double? = nil, location: Location? = nil, timeSource: TimeSource? = nil
    ) {
        self.eventId = eventId
        self.kind = kind
        self.observedAt = observedAt
        self.code = code
        self.pending = pending
        self.description = description
        self.checkEngine = checkEngine
        self.voltage = voltage
        self.odometerKm = odometerKm
        self.location = location
        self.timeSource = timeSource
    }
}
