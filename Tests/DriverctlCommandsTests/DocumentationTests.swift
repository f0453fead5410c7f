import ArgumentParser
import DriverDomain
import DriverctlCommands
import Foundation
import Testing

/// The docs promise every command (docs/OPERATIONS.md) and every configuration key (the shipped
/// packaging/driverd.toml, which the README points to, and docs/OPERATIONS.md's symptoms name some): these
/// checks fail when a new one is left out.
@Suite("Documentation")
struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every command's words after `driverctl`: `status`, `pod otp`, `config show`…
    static func commandPaths(_ command: any ParsableCommand.Type, prefix: [String] = []) -> [String] {
        let subcommands = command.configuration.subcommands
        if subcommands.isEmpty { return [prefix.joined(separator: " ")] }
        return subcommands.flatMap { commandPaths($0, prefix: prefix + [$0._commandName]) }
    }

    @Test("docs/OPERATIONS.md names every driverctl command")
    func everyCommand() throws {
        let operations = try Self.text("docs/OPERATIONS.md")
        let paths = Self.commandPaths(Driverctl.self)
        #expect(paths.count > 20)
        for path in paths {
            #expect(operations.contains("`driverctl \(path)"), "docs/OPERATIONS.md does not name driverctl \(path)")
        }
    }

    @Test("the shipped configuration file documents every key, and the README stays short")
    func everyKeyAndAShortReadme() throws {
        let file = try Self.text("packaging/driverd.toml")
        for key in DaemonConfig.knownKeys {
            let parts = key.split(separator: ".", maxSplits: 1)
            #expect(file.contains("[\(parts[0])]") && file.contains("#\(parts[1]) ="), "packaging/driverd.toml lacks \(key)")
        }
        let readme = try Self.text("README.md")
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count < 150)
        // Links to documents that exist.
        let links = readme.matches(of: /\]\((docs\/[A-Za-z.\-]+)\)/).map { String($0.1) }
        #expect(!links.isEmpty)
        for link in links {
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(link).path), "README links to missing \(link)")
        }
    }
}
