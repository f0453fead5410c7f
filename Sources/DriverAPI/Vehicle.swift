/// The OBD-II adapter's link, like the GPS link's: `absent` (none configured, unplugged, refused or silent),
/// `connecting` (opening, initialising), `noVehicle` (the adapter answers, no engine unit does: ignition off, or
/// not plugged into a car) and `ok` (the vehicle answers).
public enum VehicleLinkState: String, Codable, Sendable, CaseIterable {
    case absent, connecting, noVehicle, ok
}

/// Where the ignition signal comes from (`ignition.source`): the vehicle's RPM or charging voltage, a 0/1 file
/// (a GPIO or bus bridge), or GPS motion alone.
public enum IgnitionSource: String, Codable, Sendable, CaseIterable {
    case obd, file, gps
}

/// A diagnostic trouble code the engine unit reports: stored (mode 03, it lit or lights the check-engine light)
/// or pending (mode 07, seen once, not confirmed yet).
public struct VehicleFault: Codable, Sendable, Equatable, Hashable {
    /// SAE J2012, e.g. `P0301`.
    public var code: String
    public var pending: Bool
    /// The generic SAE description when the code is a generic one the unit knows; nil for manufacturer codes.
    public var description: String?

    public init(code: String, pending: Bool, description: String? = nil) {
        self.code = code
        self.pending = pending
        self.description = description
    }
}

/// Result of `vehicle.status`, and the payload of `vehicle.changed` (API 1.11). Values are nil while unknown:
/// never read, unsupported by the car, or older than the adapter's last answer says.
public struct VehicleStatus: Codable, Sendable, Equatable {
    /// The adapter's address (`/dev/ttyUSB0`, `192.168.0.10:35000`); nil: none configured.
    public var adapter: String?
    public var link: VehicleLinkState
    /// Why the link is not `ok`, in words (the adapter's own answer where it gave one).
    public var detail: String?
    /// The engine runs (RPM above 0, or the charging voltage): what `ignition.source = obd` uses.
    public var engineRunning: Bool?
    /// The ignition the daemon uses now, and where it comes from.
    public var ignition: Bool?
    public var ignitionSource: IgnitionSource
    /// m/s, and its age in seconds.
    public var speed: Double?
    public var speedAge: Double?
    public var rpm: Double?
    /// Percent, 0-100.
    public var fuelPercent: Double?
    /// The vehicle's own odometer, km (PID A6; many cars do not report it).
    public var odometerKm: Double?
    /// Seconds since the engine started (PID 1F).
    public var engineRunSeconds: Int?
    /// The 12 V supply at the adapter (ATRV), volts.
    public var voltage: Double?
    /// The check-engine light (malfunction indicator lamp).
    public var checkEngine: Bool?
    public var faults: [VehicleFault]
    /// Polling stopped to spare the vehicle's battery (ignition off, voltage low for long): since when, Unix seconds.
    public var batteryProtectionSince: Double?
    /// Mode 01 PIDs the car answers to, hex (`0C`, `0D`, ...).
    public var supportedPIDs: [String]
    /// Trips whose vehicle and GNSS odometers disagreed by more than 5 %.
    public var odometerDisagreements: Int

    public init(
        adapter: String?, link: VehicleLinkState, detail: String? = nil, engineRunning: Bool? = nil, ignition: Bool? = nil,
        ignitionSource: IgnitionSource, speed: Double? = nil, speedAge: Double? = nil, rpm: Double? = nil, fuelPercent: Double? = nil,
        odometerKm: Double? = nil, engineRunSeconds: Int? = nil, voltage: Double? = nil, checkEngine: Bool? = nil, faults: [VehicleFault] = [],
        batteryProtectionSince: Double? = nil, supportedPIDs: [String] = [], odometerDisagreements: Int = 0
    ) {
        self.adapter = adapter
        self.link = link
        self.detail = detail
        self.engineRunning = engineRunning
        self.ignition = ignition
        self.ignitionSource = ignitionSource
        self.speed = speed
        self.speedAge = speedAge
        self.rpm = rpm
        self.fuelPercent = fuelPercent
        self.odometerKm = odometerKm
        self.engineRunSeconds = engineRunSeconds
        self.voltage = voltage
        self.checkEngine = checkEngine
        self.faults = faults
        self.batteryProtectionSince = batteryProtectionSince
        self.supportedPIDs = supportedPIDs
        self.odometerDisagreements = odometerDisagreements
    }
}

// MARK: Methods

extension Methods {
    /// The vehicle as its OBD-II adapter reports it: link, ignition, speed, fuel, odometer, voltage, fault codes (API
    /// 1.11).
    ///
    /// driverctl: `driverctl vehicle [--follow]`.
    ///
    /// Since API 1.11. Params: none. The vehicle as its OBD-II adapter reports it (docs/VEHICLE.md); every value is
    /// absent while unknown (never read, not supported by the car, or the adapter not answering). Result:
    ///
    /// - `adapter`: `vehicle.adapter` (absent: none configured); `link`: `absent` (none, unplugged, refused or
    ///   silent), `connecting`, `noVehicle` (the adapter answers, no engine unit does: ignition off) or `ok`; `detail`:
    ///   why it is not `ok`, the adapter's own answer where it gave one;
    /// - `engineRunning` (RPM above 0, or a charging voltage of 13.2 V or more); `ignition`: the ignition the daemon
    ///   uses now, from `ignitionSource` (`obd`, `file` or `gps`);
    /// - `speed` (m/s) and `speedAge` (s), `rpm`, `fuelPercent`, `odometerKm` (PID A6; many cars do not report it),
    ///   `engineRunSeconds` (PID 1F), `voltage` (the 12 V supply at the adapter, `ATRV`);
    /// - `checkEngine` (the malfunction indicator lamp), `faults`: `[{"code", "pending", "description"}]` (stored
    ///   codes from mode 03, pending from mode 07; `description` for generic SAE codes the unit knows);
    /// - `batteryProtectionSince` (Unix seconds): polling stopped and the GPS receiver released to spare the
    ///   vehicle's battery; `supportedPIDs`: mode 01 PIDs the car answers, hex; `odometerDisagreements`.
    public static let vehicleStatus = Method<NoParams, VehicleStatus>("vehicle.status", mutating: false, screen: true)

    /// This file's methods, in `Methods.all`.
    static let vehicle: [MethodDescriptor] = [vehicleStatus.descriptor]
}
