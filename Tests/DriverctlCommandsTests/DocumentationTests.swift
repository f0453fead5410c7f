import ArgumentParser
import DriverAPI
import DriverDomain
import DriverctlCommands
import Foundation
import Testing

/// The docs promise every command (beside the method it calls, in the method's doc comment in Sources/DriverAPI) and
/// every configuration key (the shipped packaging/driverd.toml, which the README points to, and docs/OPERATIONS.md's
/// symptoms name some): these checks fail when a new one is left out.
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

    /// Each method's reference: the doc comment right above its descriptor (`static let x = Method<…>("name", …)`)
    /// in Sources/DriverAPI, without the `///`.
    static func methodDocs() throws -> [String: String] {
        let directory = root.appendingPathComponent("Sources/DriverAPI")
        var docs: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let lines = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where line.contains(/static let \w+ = Method</) {
                // The name is on the descriptor's line or, when the line breaks after `(`, on the next.
                let declaration = line + (index + 1 < lines.count ? lines[index + 1] : "")
                guard let name = declaration.firstMatch(of: /Method<[^\n]*>\(\s*"([a-zA-Z]+\.[a-zA-Z]+)"/)?.1 else { continue }
                var comment: [Substring] = []
                var above = index - 1
                while above >= 0, let text = lines[above].firstMatch(of: /^\s*\/\/\/ ?(.*)$/)?.1 {
                    comment.insert(text, at: 0)
                    above -= 1
                }
                #expect(docs[String(name)] == nil, "\(name) is declared twice")
                docs[String(name)] = comment.joined(separator: "\n")
            }
        }
        return docs
    }

    @Test("the methods' doc comments name every driverctl command beside the method it calls")
    func everyCommand() throws {
        let docs = try Self.methodDocs().values.joined(separator: "\n")
        let paths = Self.commandPaths(Driverctl.self)
        #expect(paths.count > 20)
        for path in paths {
            #expect(docs.contains("driverctl: `driverctl \(path)"), "no method's doc comment names driverctl \(path)")
        }
    }

    /// What a newcomer reads: each method's doc comment names the command that calls it, or says why there is
    /// none. (The daemon's owner of each method: RegistryDriftTests.routerMatchesDescriptors.)
    @Test("every method has a doc comment that names its driverctl command, one that exists, or says why it has none")
    func everyMethodHasACommand() throws {
        let docs = try Self.methodDocs()
        let paths = Set(Self.commandPaths(Driverctl.self))
        #expect(Set(docs.keys) == Set(Methods.all.map(\.name)), "descriptors in Sources/DriverAPI and Methods.all differ")
        for method in Methods.all.map(\.name) {
            guard let doc = docs[method], let line = doc.split(separator: "\n").first(where: { $0.hasPrefix("driverctl: ") }) else {
                Issue.record("\(method)'s doc comment names no driverctl command (or `driverctl: none`, and why)")
                continue
            }
            #expect(doc.split(separator: "\n").contains { !$0.hasPrefix("driverctl: ") }, "\(method)'s doc comment says only its command")
            if line.hasPrefix("driverctl: none") { continue }
            // `driverctl pod otp CODE` → "pod otp": the words before the first argument or option.
            // `driverctl shift start`: a command (`shift`) and its argument, so any leading words that make a command.
            let words = try #require(line.firstMatch(of: /`driverctl ([^`]*)`/)).1.split(separator: " ")
            let named = (1...words.count).contains { paths.contains(words.prefix($0).joined(separator: " ")) }
            #expect(named, "\(method)'s doc comment names driverctl \(words.joined(separator: " ")), which is not a command")
        }
    }

    @Test("every driverctl command the docs name exists")
    func noStaleCommand() throws {
        let commands = Set(Self.commandPaths(Driverctl.self).map { $0.split(separator: " ").first.map(String.init) ?? $0 } + ["help"])
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        #expect(docs.count > 5)
        let methodDocs = try Self.methodDocs().values.joined(separator: "\n")
        for doc in ["README.md", "Sources/DriverAPI"] + docs {
            let text = doc == "Sources/DriverAPI" ? methodDocs : try Self.text(doc)
            for match in text.matches(of: /`driverctl ([a-z][a-z-]*)/) {
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

    /// The targets Package.swift declares (tests aside), each with the targets of this package it depends on.
    static func packageTargets() throws -> [String: Set<String>] {
        let package = try text("Package.swift")
        var declared: [(name: String, kind: Substring, dependencies: [String])] = []
        for call in package.matches(of: /\.(target|executableTarget|systemLibrary|testTarget)\(/) {
            let body = enclosed(in: package[call.range.upperBound...], open: "(", close: ")")
            guard let name = body.firstMatch(of: /name: "([^"]+)"/)?.1 else { continue }
            var dependencies: [String] = []
            if let list = body.firstMatch(of: /dependencies: \[/) {
                let inner = enclosed(in: body[list.range.upperBound...], open: "[", close: "]")
                // Products of other packages are `.product(name: "X", package: "Y")`; this package's targets are bare names.
                let own = inner.replacing(/\.product\([^)]*\)/, with: "")
                dependencies = own.matches(of: /"([^"]+)"/).map { String($0.1) }
            }
            declared.append((String(name), call.1, dependencies))
        }
        return Dictionary(uniqueKeysWithValues: declared.filter { $0.kind != "testTarget" }.map { ($0.name, Set($0.dependencies)) })
    }

    /// What follows an opening bracket up to its matching close.
    static func enclosed(in text: Substring, open: Character, close: Character) -> Substring {
        var depth = 1
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == open { depth += 1 } else if text[index] == close { depth -= 1 }
            if depth == 0 { return text[text.startIndex..<index] }
            index = text.index(after: index)
        }
        return text
    }

    @Test("docs/ARCHITECTURE.md's module map names every target of Package.swift once, none that is gone, and each one's own imports")
    func moduleMapMatchesThePackage() throws {
        let targets = try Self.packageTargets()
        #expect(targets.count > 20 && targets["DriverDaemon"]?.contains("DriverStore") == true)
        let architecture = try Self.text("docs/ARCHITECTURE.md")
        let map = architecture.components(separatedBy: "\n## Module map\n").dropFirst().first?.components(separatedBy: "\n## ")[0] ?? ""
        var rows: [String: Set<String>] = [:]
        for row in map.split(separator: "\n") where row.hasPrefix("| `") {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, let name = cells[1].firstMatch(of: /^`([^`]+)`$/)?.1 else { continue }
            #expect(rows[String(name)] == nil, "the module map names \(name) twice")
            let imports = cells[cells.count - 2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            rows[String(name)] = Set(imports.filter { targets[$0] != nil })
        }
        #expect(Set(rows.keys).subtracting(targets.keys).isEmpty, "the module map names targets that are gone: \(Set(rows.keys).subtracting(targets.keys).sorted())")
        #expect(Set(targets.keys).subtracting(rows.keys).isEmpty, "the module map lacks \(Set(targets.keys).subtracting(rows.keys).sorted())")
        for (name, imports) in rows {
            guard let declared = targets[name] else { continue }
            #expect(imports == declared, "the module map's imports of \(name): \(imports.sorted()), Package.swift: \(declared.sorted())")
        }
    }
}
