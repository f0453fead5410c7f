#if canImport(Glibc)
import Glibc
#endif
import DriverDomain

/// Reads the power inputs from the file system: the `power_supply` class directory and the ignition file.
struct PowerInputs: Sendable {
    let powerSupplyDirectory: String
    /// Empty: no ignition input.
    let ignitionPath: String

    func readSupplies() -> [PowerSupplyReading] {
        guard let directory = opendir(powerSupplyDirectory) else { return [] }
        defer { closedir(directory) }
        var readings: [PowerSupplyReading] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard !name.hasPrefix(".") else { continue }
            let base = powerSupplyDirectory + "/" + name + "/"
            guard let type = Self.readLine(base + "type") else { continue }
            readings.append(PowerSupplyReading(
                name: name, kind: PowerSupplyReading.Kind(rawValue: type) ?? .other,
                status: Self.readLine(base + "status"),
                capacity: Self.readLine(base + "capacity").flatMap { Int($0) },
                online: Self.readLine(base + "online").map { $0 == "1" }))
        }
        return readings
    }

    /// nil without an input (no path, or the file is absent or unreadable); the input overrides GPS.
    func readIgnition() -> Bool? {
        guard !ignitionPath.isEmpty, let value = Self.readLine(ignitionPath) else { return nil }
        switch value {
        case "1": return true
        case "0": return false
        default: return nil
        }
    }

    /// The first line of a small file, trimmed.
    static func readLine(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 256)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return line.trimmingWhitespace()
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
