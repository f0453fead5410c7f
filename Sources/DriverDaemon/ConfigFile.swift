#if canImport(Glibc)
import Glibc
#endif
import DriverDomain
import TOMLKit

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
        if let (line, column) = unusableTableName(in: text) {
            throw Error(description: "\(path):\(line):\(column): a table name is letters A-Z a-z, digits, _ and - (or quoted)")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw Error(description: "\(path):\(error.source.begin.line):\(error.source.begin.column): \(error.description)")
        } catch {
            throw Error(description: "\(path): \(error)")
        }
        var values: [String: ConfigValue] = [:]
        flatten(table, prefix: "", into: &values)
        return values
    }

    /// Where a table header (`[name]`, `[[name]]`) has a character that is neither quoted nor one of a bare name's
    /// (A-Z a-z 0-9 _ -, dots between parts), or a part that is empty, or nil. The TOML library (toml++ in TOMLKit)
    /// aborts on one (`[ü]`, `[%backend]`, a lone `[` or `[[`, `[.a]`) instead of answering with an error: found by the
    /// config-toml fuzz target (a typo that stopped driverd at every start), so it is refused first.
    static func unusableTableName(in text: String) -> (line: Int, column: Int)? {
        let delimiters = [String(repeating: "\"", count: 3), String(repeating: "'", count: 3)]
        var multiline: String?  // the delimiter of the multi-line string the line is inside of
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let delimiter = multiline {
                if line.firstRange(of: delimiter) != nil { multiline = nil }
                continue
            }
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.first == "[" {
                let opening = trimmed.hasPrefix("[[") ? 2 : 1
                let column = { (offset: Int) in (number + 1, line.count - trimmed.count + offset + 1) }
                var quote: Character?
                var partStarts = true  // after the opening bracket or a dot: a name or a quote must come
                for (offset, character) in trimmed.enumerated().dropFirst(opening) {
                    if let open = quote {
                        if character == open { quote = nil }
                    } else if character == " " || character == "\t" {
                        continue
                    } else if character == "\"" || character == "'" {
                        quote = character
                        partStarts = false
                    } else if character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == "-") {
                        partStarts = false
                    } else if character == "." || character == "]" || character == "#" {
                        if partStarts { return column(offset) }
                        if character == "." { partStarts = true } else { break }
                    } else {
                        return column(offset)
                    }
                }
                if partStarts { return column(trimmed.count) }
                continue
            }
            // A multi-line string that opens on this line and does not close on it (an odd count of its delimiter).
            multiline = delimiters.first { line.split(separator: $0, omittingEmptySubsequences: false).count % 2 == 0 }
        }
        return nil
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
            switch value.type {
            case .table:
                if let nested = value.table { flatten(nested, prefix: name + ".", into: &values) }
            case .string: values[name] = .string(value.string ?? "")
            case .int: values[name] = .integer(value.int ?? 0)
            case .double: values[name] = .double(value.double ?? 0)
            case .bool: values[name] = .bool(value.bool ?? false)
            default: values[name] = .other("a TOML \(value.type)")
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
