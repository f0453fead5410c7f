import DriverAPI
import FoundationEssentials
import JSONRPC
import Logging
import NIOCore
import ServiceLifecycle

/// The voice as a front end of its own on the local API: one connection to driverd, the route for stop names,
/// and the notifications a driver should hear. Reconnects by itself when driverd restarts.
public struct VoiceService: Service {
    let configuration: KioskConfiguration
    let speaker: Speaker
    let language: KioskLanguage
    let logger: Logger
    static let topics = [
        Events.push.topic, Events.pushSummary.topic, Events.arrivalSuggested.topic, Events.stopLeftUnfinished.topic, Events.routeChanged.topic,
    ]

    public init(configuration: KioskConfiguration, language: KioskLanguage, logger: Logger) {
        self.configuration = configuration
        self.language = language
        speaker = Speaker(configuration: configuration, logger: logger)
        self.logger = logger
    }

    public func run() async throws {
        guard configuration.voiceEnabled else { return }
        guard FileManager.default.isExecutableFile(atPath: Speaker.espeak) else {
            logger.notice("the voice is off: \(Speaker.espeak) is not installed (apt-get install espeak-ng)")
            return
        }
        await cancelWhenGracefulShutdown {
            let phrases = phrases(language.tag)
            if phrases.isEmpty { logger.error("the voice has nothing to say: no catalog in \(language.catalogs)") }
            var prompter = VoicePrompter(phrases: phrases)
            var backoff = 1.0
            while !Task.isCancelled {
                do {
                    try await listen(&prompter)
                    backoff = 1
                } catch {
                    logger.debug("voice: driverd connection ended: \(error)")
                }
                try? await Task.sleep(for: .seconds(backoff))  // cancelled only by the stop, which the loop sees
                backoff = min(backoff * 2, 10)
            }
        }
    }

    /// The voice's texts for `tag`; none (silence, said in the journal) when a shipped catalog is broken.
    private func phrases(_ tag: LanguageTag) -> VoicePhrases {
        do {
            return try VoicePhrases.load(tag, from: language.catalogs)
        } catch {
            logger.error("the voice is silent in \(tag): \(error)")
            return VoicePhrases(tag: tag, texts: [:])
        }
    }

    private func listen(_ prompter: inout VoicePrompter) async throws {
        let daemon = try await DaemonLink.connect(configuration.socket)
        try await daemon.executeThenClose { inbound, outbound in
            var nextId = 1
            func send(_ method: String, _ params: [UInt8]? = nil) async throws {
                nextId += 1
                try await outbound.write(DaemonLink.line(Envelope.request(method: method, params: params, id: .number(String(nextId)))))
            }
            try await send(Methods.routeGet.name)
            try await send(Methods.eventsSubscribe.name, try Codec.encode(SubscribeParams(topics: Self.topics)))
            for try await frame in inbound {
                // driverd writes JSON lines only; a line that is not one tells the voice nothing, so it is passed over.
                guard case .line(let line) = frame, let message = try? JSONParser.parse(line.readableBytesView) else { continue }
                // The screen may have changed the driver's language since the last line.
                let tag = language.tag
                if prompter.phrases.tag != tag { prompter.phrases = phrases(tag) }
                for action in Self.actions(for: message, &prompter) {
                    switch action {
                    case .say(let text): await speaker.say(text, voice: prompter.phrases.voice(configured: configuration.voiceName))
                    case .fetchRoute: try await send(Methods.routeGet.name)
                    }
                }
            }
        }
    }

    /// A line from driverd: an answer of `route.get` (the only call with a result the voice reads) or a notification.
    /// Each try? is the expected "not this release's shape" (a newer driverd): nothing is said for it.
    static func actions(for message: JSONValue, _ prompter: inout VoicePrompter) -> [VoicePrompter.Action] {
        if let result = message["result"], let route = try? Codec.decode(RouteView.self, from: result) {
            return prompter.route(route).map(VoicePrompter.Action.say)
        }
        guard case .string(let topic)? = message["method"], let params = message["params"] else { return [] }
        let action: VoicePrompter.Action?
        switch topic {
        case Events.routeChanged.topic:
            return ((try? Events.routeChanged.decode(params)).map { prompter.route($0) } ?? []).map(VoicePrompter.Action.say)
        case Events.push.topic, Events.stopLeftUnfinished.topic:
            action = (try? Events.push.decode(params)).flatMap { prompter.push($0) }
        case Events.pushSummary.topic:
            action = (try? Events.pushSummary.decode(params)).flatMap { prompter.summary($0) }.map(VoicePrompter.Action.say)
        case Events.arrivalSuggested.topic:
            action = (try? Events.arrivalSuggested.decode(params)).flatMap { prompter.arrival($0) }.map(VoicePrompter.Action.say)
        default:
            action = nil
        }
        return action.map { [$0] } ?? []
    }
}
