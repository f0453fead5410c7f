import DriverAPI
import DriverStore
@testable import DriverDaemon
import Foundation
import Testing

/// The registries are declared once (`Methods.all`, `Events.topics`); these checks fail when the daemon or the
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

    @Test("every event declared in DriverAPI is in Events.topics once, and docs/API.md documents each")
    func topicsDerivedFromDeclarations() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(contentsOf: root.appendingPathComponent("Sources/DriverAPI/Event.swift"), encoding: .utf8)
        let declared = Self.matches(of: #"= Event<[^>]+>\("([^"]+)"\)"#, in: source)
        #expect(declared.count >= 19)
        #expect(Set(Events.topics).count == Events.topics.count, "a topic listed twice")
        #expect(Set(declared) == Set(Events.topics), "declared but not listed: \(Set(declared).subtracting(Events.topics)); listed but not declared: \(Set(Events.topics).subtracting(declared))")
        let api = try String(contentsOf: root.appendingPathComponent("docs/API.md"), encoding: .utf8)
        for topic in Events.topics { #expect(api.contains("`\(topic)`"), "docs/API.md does not document \(topic)") }
    }

    static func quoted(in text: String) -> [String] { matches(of: #""([^"]+)""#, in: text) }

    static func matches(of pattern: String, in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
