import CSystemd

/// Asks logind to power the machine off over the system bus (`org.freedesktop.login1.Manager.PowerOff`), as an
/// unprivileged service may where polkit grants its user `org.freedesktop.login1.power-off` (docs/VEHICLE.md).
public enum PowerOff {
    public static func request() throws(SystemdError) {
        var bus: OpaquePointer? = nil
        _ = try SystemdError.check("sd_bus_open_system", sd_bus_open_system(&bus))
        defer { sd_bus_unref(bus) }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        _ = try SystemdError.check("PowerOff", csystemd_logind_power_off(bus, &error))
    }
}
