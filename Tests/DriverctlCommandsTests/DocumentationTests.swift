import ArgumentParser
import DriverAPI
import DriverDomain
import DriverctlCommands
import Foundation
import Testing

/// The docs promise every command (docs/API.md, beside the method it calls) and every configuration key (the shipped
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

    @Test("docs/API.md names every driverctl command beside the method it calls")
    func everyCommand() throws {
        let api = try Self.text("docs/API.md")
        let paths = Self.commandPaths(Driverctl.self)
        #expect(paths.count > 20)
        for path in paths {
            #expect(api.contains("driverctl: `driverctl \(path)"), "docs/API.md does not name driverctl \(path) after a method")
        }
    }

    /// The table a newcomer reads: each method's section in docs/API.md names the command that calls it, or says
    /// why there is none. (The daemon's owner of each method: RegistryDriftTests.routerMatchesDescriptors.)
    @Test("every method names its driverctl command in docs/API.md, one that exists, or says why it has none")
    func everyMethodHasACommand() throws {
        let api = try Self.text("docs/API.md")
        let paths = Set(Self.commandPaths(Driverctl.self))
        for method in Methods.all.map(\.name) {
            let sections = api.components(separatedBy: "\n### `\(method)`\n")
            guard sections.count == 2 else {
                Issue.record("docs/API.md has \(sections.count - 1) sections for \(method)")
                continue
            }
            let section = sections[1].components(separatedBy: "\n### ")[0]
            guard let line = section.split(separator: "\n").first(where: { $0.hasPrefix("driverctl: ") }) else {
                Issue.record("docs/API.md's \(method) names no driverctl command (or `driverctl: none`, and why)")
                continue
            }
            if line.hasPrefix("driverctl: none") { continue }
            // `driverctl pod otp CODE` → "pod otp": the words before the first argument or option.
            // `driverctl shift start`: a command (`shift`) and its argument, so any leading words that make a command.
            let words = try #require(line.firstMatch(of: /`driverctl ([^`]*)`/)).1.split(separator: " ")
            let named = (1...words.count).contains { paths.contains(words.prefix($0).joined(separator: " ")) }
            #expect(named, "docs/API.md's \(method) names driverctl \(words.joined(separator: " ")), which is not a command")
        }
    }

    @Test("every driverctl command the docs name exists")
    func noStaleCommand() throws {
        let commands = Set(Self.commandPaths(Driverctl.self).map { $0.split(separator: " ").first.map(String.init) ?? $0 } + ["help"])
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        #expect(docs.count > 5)
        for doc in ["README.md"] + docs {
            for match in try Self.text(doc).matches(of: /`driverctl ([a-z][a-z-]*)/) {
                #expect(commands.contains(String(match.1)), "\(doc) names driverctl \(match.1), which does not exist")
            }
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
