import ArgumentParser
import DriverAPI
import JSONRPC

struct VehicleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vehicle", abstract: "Show the vehicle as its OBD-II adapter reports it: link, engine, speed, fuel, odometer, voltage, fault codes.")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Keep printing the vehicle's status each time it changes (Ctrl-C to stop).")
    var follow = false

    func run() throws {
        let session = try Session(options, timeout: follow ? nil : .seconds(10))
        let status = try session.call(Methods.vehicleStatus, NoParams())
        try Output(options).emit(status) { VehicleFormatter.details(status) }
        guard follow else { return }
        _ = try session.callUnchecked(Methods.eventsSubscribe, SubscribeParams(topics: [Events.vehicleChanged.topic]))
        try session.follow { method, params in
            // A status of another release's shape is passed over (expected from a newer driverd).
            guard method == Events.vehicleChanged.topic, let params, let status = try? Events.vehicleChanged.decode(params) else { return }
            Environment.printLine(options.json ? JSONWriter.string(params) : VehicleFormatter.line(status))
        }
    }
}

/// The vehicle's status in words.
enum VehicleFormatter {
    static func details(_ status: VehicleStatus) -> String {
        var lines = ["adapter:      \(status.adapter ?? "none (vehicle.adapter)")"]
        lines.append("link:         \(status.link.rawValue)\(status.detail.map { " (\($0))" } ?? "")")
        lines.append("ignition:     \(onOff(status.ignition)) (source \(status.ignitionSource.rawValue)); engine \(status.engineRunning.map { $0 ? "running" : "off" } ?? "unknown")")
        lines.append("speed:        \(status.speed.map { "\(TextFormat.fixed($0 * 3.6, decimals: 0)) km/h" } ?? "unknown")\(status.rpm.map { ", \(Int($0)) rpm" } ?? "")")
        lines.append("fuel:         \(status.fuelPercent.map { "\(TextFormat.fixed($0, decimals: 0)) %" } ?? "unknown")")
        lines.append("odometer:     \(status.odometerKm.map { "\(TextFormat.fixed($0, decimals: 1)) km" } ?? "not reported")")
        lines.append("voltage:      \(status.voltage.map { "\(TextFormat.fixed($0, decimals: 1)) V" } ?? "unknown")")
        if let since = status.batteryProtectionSince { lines.append("battery:      LOW, protecting it since \(GPSFormatter.utc(since))") }
        lines.append("check engine: \(status.checkEngine.map { $0 ? "ON" : "off" } ?? "unknown")")
        if status.faults.isEmpty {
            lines.append("fault codes:  none")
        } else {
            lines.append("fault codes:")
            for fault in status.faults {
                lines.append("  \(fault.code)\(fault.pending ? " (pending)" : "")  \(fault.description ?? "manufacturer-specific")")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func line(_ status: VehicleStatus) -> String {
        var parts = ["link \(status.link.rawValue)", "engine \(status.engineRunning.map { $0 ? "running" : "off" } ?? "unknown")"]
        if let fuel = status.fuelPercent { parts.append("fuel \(TextFormat.fixed(fuel, decimals: 0)) %") }
        if let volts = status.voltage { parts.append("\(TextFormat.fixed(volts, decimals: 1)) V") }
        if status.checkEngine == true { parts.append("CHECK ENGINE") }
        if !status.faults.isEmpty { parts.append("codes " + status.faults.map { $0.code + ($0.pending ? "?" : "") }.joined(separator: " ")) }
        if status.batteryProtectionSince != nil { parts.append("BATTERY LOW") }
        return parts.joined(separator: ", ")
    }

    private static func onOff(_ value: Bool?) -> String { value.map { $0 ? "on" : "off" } ?? "no input" }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let vehicleCommands: [any ParsableCommand.Type] = [VehicleCommand.self]
}
