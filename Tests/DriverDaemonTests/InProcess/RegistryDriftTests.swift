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
        let source = try String(contentsOf: root.appendingPathComponent("Sources/DriverAPI/Event.swift"), encoding: .utf8)
        let described = Self.matches(of: #"= Event<[^>]+>\(\.(\w+)\)"#, in: source)
        let topics = Topic.allCases.map { String(describing: $0) }
        #expect(described.count == Set(described).count, "two descriptors of one topic")
        #expect(Set(described) == Set(topics), "topics without a descriptor: \(Set(topics).subtracting(described))")
        #expect(Events.topics == Topic.allCases.map(\.rawValue))
        // docs/API.md's list of topics: ContractGoldenTests.topicsDocumented.
    }

    static func quoted(in text: String) -> [String] { matches(of: #""([^"]+)""#, in: text) }

    static func matches(of pattern: String, in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
