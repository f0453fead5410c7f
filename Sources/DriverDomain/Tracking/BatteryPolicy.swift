/// A power supply as the kernel describes it (`/sys/class/power_supply/*`).
public struct PowerSupplyReading: Sendable, Equatable {
    public enum Kind: String, Sendable { case battery = "Battery", mains = "Mains", usb = "USB", other }

    public var name: String
    public var kind: Kind
    /// `status` of a battery: Charging, Discharging, Full, Not charging, Unknown.
    public var status: String?
    /// `capacity` of a battery, percent.
    public var capacity: Int?
    /// `online` of a mains or USB supply.
    public var online: Bool?

    public init(name: String, kind: Kind, status: String? = nil, capacity: Int? = nil, online: Bool? = nil) {
        self.name = name
        self.kind = kind
        self.status = status
        self.capacity = capacity
        self.online = online
    }
}

/// Battery-saver decision: on battery (a discharging battery, no external supply online) at or below the
/// threshold, or with the ignition off.
public enum BatteryPolicy {
    public static func saver(readings: [PowerSupplyReading], thresholdPercent: Int, ignition: Bool?) -> Bool {
        if ignition == false { return true }
        if readings.contains(where: { $0.kind != .battery && $0.online == true }) { return false }
        return readings.contains { reading in
            reading.kind == .battery && reading.status == "Discharging"
                && (reading.capacity.map { $0 <= thresholdPercent } ?? false)
        }
    }
}
