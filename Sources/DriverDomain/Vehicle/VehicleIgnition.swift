/// Whether the engine runs, from what the adapter read (pure): RPM above 0, or a supply voltage only an alternator
/// gives (a resting 12 V battery reads 12.0-12.8 V; charging, 13.2-14.8 V). An RPM older than `maxAge` is
/// not evidence: with the ignition off only the voltage is read.
public enum VehicleIgnition {
    public static let chargingVoltage = 13.2

    public static func engineRunning(rpm: Double?, rpmAge: Double?, voltage: Double?, maxAge: Double = 150) -> Bool? {
        let freshRPM = (rpmAge.map { $0 <= maxAge } ?? false) ? rpm : nil
        if let freshRPM, freshRPM > 0 { return true }
        if let voltage, voltage >= chargingVoltage { return true }
        if freshRPM != nil || voltage != nil { return false }
        return nil
    }
}
