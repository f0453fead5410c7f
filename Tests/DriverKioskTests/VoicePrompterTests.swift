import DriverAPI
import Foundation
import Testing

@testable import DriverKiosk

@Suite("What the voice says")
struct VoicePrompterTests {
    static let route = RouteView(
        stops: [
            StopView(id: "task-1003-pickup", taskId: "task-1003", kind: .pickup, status: .enRoute, address: "Haidplatz 8",
                     name: "Pizzeria Da Marco", phone: "+49 941 000001", lat: 49, lng: 12),
            StopView(id: "task-1003-dropoff", taskId: "task-1003", kind: .dropoff, status: .pending, address: "Am Singrün 12",
                     name: "Anna Becker", phone: "+49 170 1234567", lat: 49, lng: 12),
        ], tasks: [], syncedAt: nil)

    /// The catalogs the package ships (kiosk/www/i18n): the voice says what they hold.
    static let catalogs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("kiosk/www/i18n").path
    static let english = try! VoicePhrases.load(LanguageTag("en")!, from: catalogs)

    func push(_ id: Int, _ kind: String, message: String? = nil) -> PushEvent {
        PushEvent(id: id, kind: kind, taskId: "task-1003", message: message, title: "New order task-1003", interruptive: true, receivedAt: 0)
    }

    @Test("a new order names its pickup, once, however often driverd sends it again")
    func newOrder() {
        var prompter = VoicePrompter(phrases: Self.english)
        prompter.route(Self.route)
        #expect(prompter.push(push(5, "TASK_ASSIGNED")) == .say("New order. Pick up at Pizzeria Da Marco."))
        #expect(prompter.push(push(5, "TASK_ASSIGNED")) == nil)
        #expect(prompter.push(push(6, "ROUTE_CHANGED")) == .say("Your route has changed. Next stop: Pizzeria Da Marco."))
    }

    @Test("a new order the route does not hold yet waits for the route, fetched once")
    func newOrderBeforeItsRoute() {
        var prompter = VoicePrompter(phrases: Self.english)
        #expect(prompter.push(push(5, "TASK_ASSIGNED")) == .fetchRoute)
        var second = push(8, "TASK_ASSIGNED")
        second.taskId = "task-1003"
        #expect(prompter.push(second) == nil)
        #expect(prompter.route(Self.route) == ["New order. Pick up at Pizzeria Da Marco.", "New order. Pick up at Pizzeria Da Marco."])
        #expect(prompter.route(Self.route) == [])
    }

    @Test("an order missing from two routes in a row is announced without its pickup")
    func newOrderNeverInTheRoute() {
        var prompter = VoicePrompter(phrases: Self.english)
        var unknown = push(9, "TASK_ASSIGNED")
        unknown.taskId = "task-4711"
        #expect(prompter.push(unknown) == .fetchRoute)
        #expect(prompter.route(Self.route) == [])
        #expect(prompter.route(Self.route) == ["New order."])
    }

    @Test("while driving: the count of what waits, each time it grows, and never the text")
    func held() {
        var prompter = VoicePrompter(phrases: Self.english)
        #expect(prompter.summary(PushSummary(pending: 1, held: 1, summary: "1 message")) == "One message is waiting. Pull over to read.")
        #expect(prompter.summary(PushSummary(pending: 1, held: 1, summary: "1 message")) == nil)
        #expect(prompter.summary(PushSummary(pending: 2, held: 2, summary: "2 messages")) == "2 messages are waiting. Pull over to read.")
        #expect(prompter.push(push(7, "CUSTOMER_MESSAGE", message: "Call me on +49 170 1234567, code 4812"))
            == .say("New message from the office. It is on the screen."))
    }

    @Test("an arrival names the stop")
    func arrival() {
        var prompter = VoicePrompter(phrases: Self.english)
        prompter.route(Self.route)
        let detected = ArrivalDetected(taskId: "task-1003", stopId: "task-1003-dropoff", distanceMeters: 12, dwellSeconds: 20, detectedAt: 0, mode: .suggest)
        #expect(prompter.arrival(detected) == "You have reached Anna Becker. Tap Arrived to confirm.")
    }

    @Test("no run of three digits or more survives: phones, codes, order numbers", arguments: [
        ("Call +49 941 000001 now.", "Call now."),
        ("Code 4812.", "Code."),
        ("Pick up at Bar 2000 Grill.", "Pick up at Bar Grill."),
        ("Gate 12, (0941) 55-66-77 ask", "Gate 12, ask"),
        ("Order task-1003 ready", "Order task ready"),
    ])
    func clean(text: String, expected: String) {
        let cleaned = VoicePrompter.clean(text)
        #expect(cleaned == expected)
        #expect(!cleaned.contains { $0.isNumber } || cleaned.filter(\.isNumber).count < 3)
    }

    @Test("each language says a new order in its own words with its own espeak-ng voice; English keeps the configured voice; a language without a catalog speaks English")
    func languages() throws {
        for code in ["de", "fr", "es", "pt", "pl", "tr", "ar"] {
            let phrases = try VoicePhrases.load(LanguageTag(code)!, from: Self.catalogs)
            var prompter = VoicePrompter(phrases: phrases)
            prompter.route(Self.route)
            guard case .say(let text)? = prompter.push(push(5, "TASK_ASSIGNED")) else {
                Issue.record("\(code): no prompt for a new order")
                continue
            }
            #expect(text.contains("Pizzeria Da Marco") && !text.hasPrefix("New order"), "\(code): \(text)")
            #expect(phrases.voice(configured: "en-gb") == code)
        }
        #expect(Self.english.voice(configured: "en-gb") == "en-gb")
        #expect(try VoicePhrases.load(LanguageTag("xx")!, from: Self.catalogs).say("voice.newOrder") == "New order.")
    }

    @Test("a region picks espeak-ng's voice of that region (pt-BR, es-MX, fr-BE, fr-CH); its words are the region's catalog's over the language's")
    func regionalVoices() throws {
        let voices = ["pt-BR": "pt-br", "pt-PT": "pt", "es-MX": "es-419", "es-419": "es-419", "es-ES": "es", "fr-BE": "fr-be",
                      "fr-CH": "fr-ch", "fr-FR": "fr", "de-AT": "de", "en-US": "en-gb"]
        for (tag, voice) in voices {
            #expect(try VoicePhrases.load(LanguageTag(tag)!, from: Self.catalogs).voice(configured: "en-gb") == voice, "\(tag)")
        }
        let brazil = try VoicePhrases.load(LanguageTag("pt-BR")!, from: Self.catalogs)
        let portugal = try VoicePhrases.load(LanguageTag("pt-PT")!, from: Self.catalogs)
        #expect(brazil.say("voice.newOrder") == "Novo pedido." && portugal.say("voice.newOrder") == "Nova encomenda.")
        #expect(brazil.say("voice.arrived", ["place": "Loja"]) == portugal.say("voice.arrived", ["place": "Loja"]))  // not said differently
        #expect(try VoicePhrases.load(LanguageTag("es-MX")!, from: Self.catalogs).say("voice.newOrder")
            == VoicePhrases.load(LanguageTag("es")!, from: Self.catalogs).say("voice.newOrder"))
    }

    @Test("the screen's language: a catalog's code with a region of two letters or three digits, nothing else")
    func screenLanguage() {
        let language = KioskLanguage(www: URL(fileURLWithPath: Self.catalogs).deletingLastPathComponent().path)
        #expect(language.set("pt-br") && language.tag.description == "pt-BR" && language.tag.language == "pt")
        #expect(language.set("es-419") && language.tag.description == "es-419" && language.tag.language == "es")
        #expect(language.set("DE") && language.tag.description == "de")
        for refused in ["xx-BR", "pt-Brazil", "pt-BR-x", "pt-", "", "de-1a"] { #expect(!language.set(refused), "\(refused)") }
        #expect(language.tag.description == "de")
    }

    @Test("the screen's list is every catalog, English first; a catalog is a region's words over its language's over English's")
    func catalogs() throws {
        let language = KioskLanguage(www: URL(fileURLWithPath: Self.catalogs).deletingLastPathComponent().path)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.catalogs).filter { $0.hasSuffix(".json") }
        #expect(language.codes.first == "en")
        #expect(Set(language.codes) == Set(files.map { String($0.dropLast(5)) }))
        #expect(Array(language.codes.dropFirst()) == language.codes.dropFirst().sorted())
        func own(_ code: String) throws -> [String: String] {
            try JSONDecoder().decode([String: String].self, from: Data(contentsOf: URL(fileURLWithPath: "\(Self.catalogs)/\(code).json")))
        }
        let brazil = try language.catalog(LanguageTag("pt-BR")!)
        #expect(brazil == (try own("en")).merging(try own("pt")) { $1 }.merging(try own("pt-BR")) { $1 })
        #expect(try own("pt-BR").count < (try own("pt")).count, "a region's catalog holds only its own words")
        #expect(try language.catalog(LanguageTag("pt-PT")!) == (try own("en")).merging(try own("pt")) { $1 })
        #expect(try language.catalog(LanguageTag("xx")!) == (try own("en")))
        // A catalog that is there but broken is an error (a broken package), not silently English.
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-catalogs-\(getpid())").path
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
        defer { _ = try? FileManager.default.removeItem(atPath: broken) }  // a test's scratch directory
        try Data("{\"language.choose\": 3}".utf8).write(to: URL(fileURLWithPath: broken + "/de.json"))
        #expect(throws: KioskCatalogError.self) { try KioskLanguage.catalog(LanguageTag("de")!, in: broken) }
        #expect(try KioskLanguage.catalog(LanguageTag("fr")!, in: broken).isEmpty)
    }
}
