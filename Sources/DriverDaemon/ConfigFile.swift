#if canImport(Glibc)
import Glibc
#endif
import DriverDomain
import TOMLReader

/// Reads the TOML configuration file into flattened `section.key` values for `DaemonConfig.parse`.
public enum ConfigFile {
    public struct Error: Swift.Error, CustomStringConvertible {
        public let description: String
    }

    /// nil when the file does not exist (an absent config means the defaults).
    public static func load(path: String) throws(Error) -> [String: ConfigValue]? {
        guard let text = readText(path) else {
            if errno == ENOENT { return nil }
            throw Error(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String = "<config>") throws(Error) -> [String: ConfigValue] {
        let table: TOMLTable
        do {
            table = try TOMLReader.table(text)
        } catch {
            throw Error(description: "\(path):\(error)")
        }
        var values: [String: ConfigValue] = [:]
        flatten(table, prefix: "", into: &values)
        return values
    }

    /// A warning when the file holds a password or a claim token yet every user may read it (the package installs it 0640,
    /// group driverd; a copy made by hand often is 0644).
    public static func exposedSecretWarning(path: String, config: DaemonConfig) -> ConfigIssue? {
        guard let key = !config.backendPassword.isEmpty ? "backend.password" : !config.backendClaimToken.isEmpty ? "backend.claim_token" : nil
        else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IROTH != 0 else { return nil }
        let mode = String(info.st_mode & 0o777, radix: 8)
        return ConfigIssue(
            key: key,
            message: "set in a file every user can read (mode 0\(mode)); run: chgrp driverd \(path) && chmod 0640 \(path)")
    }

    private static func flatten(_ table: TOMLTable, prefix: String, into values: inout [String: ConfigValue]) {
        for key in table.keys {
            guard let value = table[key] else { continue }
            let name = prefix + key
            switch value {
            case .table(let nested): flatten(nested, prefix: name + ".", into: &values)
            case .string(let text): values[name] = .string(text)
            case .integer(let number): values[name] = .integer(number)
            case .float(let number): values[name] = .double(number)
            case .boolean(let flag): values[name] = .bool(flag)
            case .dateTime, .array: values[name] = .other(value.kind)
            }
        }
    }

    private static func readText(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
