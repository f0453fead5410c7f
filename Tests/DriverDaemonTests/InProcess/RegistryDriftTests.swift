import DriverAPI
import DriverStore
@testable import DriverDaemon
import Foundation
import Testing

/// The registries are declared once (`Methods.all`, `Topic`); these checks fail when the daemon or the
/// screen drifts from them.
@Suite("Registries")
struct RegistryDriftTests {
    @Test("the daemon answers every declared method and nothing undeclared")
    func routerMatchesDescriptors() throws {
        let daemon = try InProcessDaemon(backend: StandInBackend())
        let declared = Methods.all.map(\.name)
        #expect(Set(declared).count == declared.count, "a method declared twice")
        #expect(daemon.assembly.router.methodNames == declared.sorted())
    }

    @Test("every outbox kind has an owner that sends it and takes its outcomes")
    func everyKindOwned() throws {
        let daemon = try InProcessDaemon(backend: StandInBackend())
        let uplink = try #require(daemon.assembly.uplink)
        #expect(uplink.ownedKinds == Set(OutboxItemRecord.Kind.allCases))
    }

    @Test("the screen subscribes to declared topics and calls only methods the kiosk forwards")
    func screenUsesDeclaredNames() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let script = try String(contentsOf: root.appendingPathComponent("kiosk/www/kiosk.js"), encoding: .utf8)
        let start = try #require(script.range(of: "const TOPICS = ["))
        let end = try #require(script.range(of: "];", range: start.upperBound..<script.endIndex))
        let topicsLine = script[start.upperBound..<end.lowerBound]
        let topics = Self.quoted(in: String(topicsLine))
        #expect(!topics.isEmpty)
        #expect(Set(topics).subtracting(Events.topics).isEmpty, "kiosk.js subscribes to undeclared topics")
        let forwarded = Set(Methods.all.filter(\.forScreen).map(\.name))
        // Every `call("name"`, `act("name"` and every method in ACTION_METHOD.
        let called = Self.matches(of: #"(?:call|act)\("([a-zA-Z.]+)""#, in: script) + Self.matches(of: #": "([a-z]+\.[a-zA-Z]+)""#, in: script)
        #expect(!called.isEmpty)
        for method in Set(called) where !method.hasPrefix("kiosk.") {
            #expect(forwarded.contains(method), "kiosk.js calls \(method), which the kiosk does not forward")
        }
    }

    @Test("every topic has one event descriptor in DriverAPI, and every descriptor its own topic")
    func topicsDerivedFromDeclarations() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(contentsOf: root.appendingPathComponent("Sources/DriverAPI/Events.swift"), encoding: .utf8)
        let described = Self.matches(of: #"= Event<[^>]+>\(\.(\w+)\)"#, in: source)
        let topics = Topic.allCases.map { String(describing: $0) }
        #expect(described.count == Set(described).count, "two descriptors of one topic")
        #expect(Set(described) == Set(topics), "topics without a descriptor: \(Set(topics).subtracting(described))")
        #expect(Events.topics == Topic.allCases.map(\.rawValue))
        // docs/API.md's Notifications: ContractGoldenTests.topicsDocumented.
    }

    /// The map a newcomer follows from a method's name to every room it lives in (docs/ARCHITECTURE.md, "Where each
    /// method lives"), derived from the sources (the DriverAPI file that declares each method), the assembly (the owner
    /// that registered it) and DriverctlCommands (the file of the commands that call it; the method's doc comment
    /// names its command, `DocumentationTests`). A namespace has one file and one owner; its DriverAPI file and its
    /// driverctl file carry its name (`route.*`: `Route.swift`, `RouteCommands.swift`).
    @Test("each namespace: one DriverAPI file and one driverctl file, named after it, and one daemon owner")
    func namespaceRooms() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let daemon = try InProcessDaemon(backend: StandInBackend())
        let owners = daemon.assembly.methodOwners
        var declaredIn: [String: String] = [:]
        var identifierOf: [String: String] = [:]
        let apiDirectory = root.appendingPathComponent("Sources/DriverAPI")
        for file in try FileManager.default.contentsOfDirectory(atPath: apiDirectory.path) where file.hasSuffix(".swift") {
            let source = try String(contentsOf: apiDirectory.appendingPathComponent(file), encoding: .utf8)
            let declarations = Self.matches(of: #"static let ([a-zA-Z]+) = Method<[^\n]*>\("([a-zA-Z]+\.[a-zA-Z]+)""#, in: source, groups: 2)
            for declaration in declarations {
                declaredIn[declaration[1]] = file
                identifierOf[declaration[1]] = declaration[0]
            }
        }
        var commandSources: [String: String] = [:]
        let commandsDirectory = root.appendingPathComponent("Sources/DriverctlCommands")
        for file in try FileManager.default.contentsOfDirectory(atPath: commandsDirectory.path) where file.hasSuffix(".swift") {
            commandSources[file] = try String(contentsOf: commandsDirectory.appendingPathComponent(file), encoding: .utf8)
        }
        var namespaces: [String] = []
        var methodsOf: [String: [String]] = [:]
        for method in Methods.all.map(\.name) {
            let namespace = String(method.split(separator: ".")[0])
            if methodsOf[namespace] == nil { namespaces.append(namespace) }
            methodsOf[namespace, default: []].append(method)
        }
        for namespace in namespaces {
            let methods = methodsOf[namespace] ?? []
            let files = Set(methods.compactMap { declaredIn[$0] })
            let owner = Set(methods.compactMap { owners[$0] })
            #expect(files.count == 1, "\(namespace).* is declared in \(files.sorted()): one DriverAPI file a namespace")
            #expect(files.map { $0.lowercased() } == ["\(namespace.lowercased()).swift"], "\(namespace).* is declared in \(files.sorted()), not in a file of its name")
            // The driverctl commands that call the namespace's methods live in a file of its name too.
            let home = commandSources.keys.filter { $0.lowercased().hasPrefix(namespace.lowercased() + "command") }
            for method in methods {
                guard let identifier = identifierOf[method] else { continue }
                let calledFrom = commandSources.filter { Self.calls($0.value, identifier) }.keys
                guard !calledFrom.isEmpty else { continue }
                #expect(home.count == 1 && calledFrom.contains(home[0]),
                        "\(method)'s command is in \(calledFrom.sorted()), not in DriverctlCommands/\(namespace.prefix(1).uppercased() + namespace.dropFirst())Command(s).swift")
            }
            #expect(owner.count == 1, "\(namespace).* is registered by \(owner.sorted()): one owner a namespace")
            #expect(methods.allSatisfy { owners[$0] != nil }, "a method of \(namespace).* has no owner")
        }
        #expect(namespaces.count > 10)
    }

    static func quoted(in text: String) -> [String] { matches(of: #""([^"]+)""#, in: text) }

    /// Whether `source` calls `Methods.<identifier>` (the whole name: `taskFail`, not a longer one it begins).
    static func calls(_ source: String, _ identifier: String) -> Bool {
        !matches(of: #"Methods\.(\#(identifier))\b"#, in: source).isEmpty
    }

    /// Each match's first `groups` capture groups.
    static func matches(of pattern: String, in text: String, groups: Int) -> [[String]] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (1...groups).compactMap { Range(match.range(at: $0), in: text).map { String(text[$0]) } }
        }
    }

    static func matches(of pattern: String, in text: String) -> [String] {
        matches(of: pattern, in: text, groups: 1).compactMap(\.first)
    }
}
