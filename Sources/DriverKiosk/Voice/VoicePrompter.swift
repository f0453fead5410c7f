import FoundationEssentials
import DriverAPI

/// What the voice says, decided without I/O: a new order, a route change, what waits while driving ("one
/// message waiting, pull over to read"), an arrival, a stop left unfinished. Each push is spoken once however
/// often driverd sends it again (every new subscriber gets the unacknowledged ones). Nothing spoken holds a
/// run of three digits or more: no phone number, no code, no order number.
public struct VoicePrompter: Sendable {
    /// What the runner does next.
    public enum Action: Equatable, Sendable {
        case say(String)
        /// A new order whose pickup the prompter does not know yet: fetch the route, then give it `route(_:)`.
        case fetchRoute
    }

    /// Stop names by stop id and by task, from the latest route.
    private var stopNames: [String: String] = [:]
    private var pickupNames: [String: String] = [:]
    private var nextStopName: String?
    private var spokenPushes: Set<Int> = []
    private var lastHeld = 0
    /// New orders waiting for the route that names their pickup, with how many routes came without it.
    private var awaitingRoute: [(push: PushEvent, routesWithout: Int)] = []
    /// The driver's language: what the screen shows, the voice says.
    public var phrases: VoicePhrases

    public init(phrases: VoicePhrases) { self.phrases = phrases }

    /// The latest route; answers the new orders that waited for it. driverd may answer `route.get` before its
    /// sync with the backend brings the new order; the `route.changed` after the sync names it. An order
    /// missing from two routes in a row is announced without its pickup.
    @discardableResult
    public mutating func route(_ route: RouteView) -> [String] {
        learn(route)
        var spoken: [String] = []
        var still: [(push: PushEvent, routesWithout: Int)] = []
        for (push, routesWithout) in awaitingRoute {
            if push.taskId.flatMap({ pickupNames[$0] }) != nil || routesWithout >= 1 {
                spoken.append(newOrder(push))
            } else {
                still.append((push, routesWithout + 1))
            }
        }
        awaitingRoute = still
        return spoken
    }

    private mutating func learn(_ route: RouteView) {
        for stop in route.stops {
            stopNames[stop.id] = stop.name
            if stop.kind == .pickup { pickupNames[stop.taskId] = stop.name }
        }
        for task in route.tasks {
            for stop in task.stops {
                stopNames[stop.id] = stop.name
                if stop.kind == .pickup { pickupNames[task.id] = stop.name }
            }
        }
        nextStopName = route.stops.first?.name
    }

    public mutating func push(_ push: PushEvent) -> Action? {
        guard spokenPushes.insert(push.id).inserted else { return nil }
        lastHeld = 0
        if push.kind == "TASK_ASSIGNED", let taskId = push.taskId, pickupNames[taskId] == nil {
            awaitingRoute.append((push, 0))
            return awaitingRoute.count == 1 ? .fetchRoute : nil
        }
        return text(push).map(Action.say)
    }

    private func newOrder(_ push: PushEvent) -> String {
        Self.clean(phrases.say("voice.newOrder") + (push.taskId.flatMap { pickupNames[$0] }.map { " " + phrases.say("voice.pickUpAt", ["place": $0]) } ?? ""))
    }

    private func text(_ push: PushEvent) -> String? {
        switch push.kind {
        case "TASK_ASSIGNED":
            return newOrder(push)
        case "ROUTE_CHANGED":
            return Self.clean(phrases.say("voice.routeChanged") + (nextStopName.map { " " + phrases.say("voice.nextStop", ["place": $0]) } ?? ""))
        case "TASK_CANCELLED":
            return phrases.say("voice.orderCancelled")
        case "STOP_LEFT_UNFINISHED":
            return Self.clean(phrases.say("voice.leftUnfinished", ["place": push.taskId.flatMap { stopNameOfDropoff($0) } ?? phrases.say("voice.aStop")]))
        default:
            // The text may carry a phone number or a code: it stays on the screen.
            return phrases.say("voice.message")
        }
    }

    /// While driving: what waits, once each time more is held.
    public mutating func summary(_ summary: PushSummary) -> String? {
        defer { lastHeld = summary.held }
        guard summary.held > lastHeld else { return nil }
        return summary.held == 1 ? phrases.say("voice.waitingOne") : phrases.say("voice.waitingMany", ["count": String(min(summary.held, 99))])
    }

    public func arrival(_ arrival: ArrivalDetected) -> String? {
        let name = stopNames[arrival.stopId] ?? phrases.say("voice.theStop")
        return Self.clean(phrases.say(arrival.mode == .auto ? "voice.arrived" : "voice.reached", ["place": name]))
    }

    private func stopNameOfDropoff(_ taskId: String) -> String? { stopNames["\(taskId)-dropoff"] }

    /// Removes every run of digits and phone punctuation that holds three digits or more ("+49 941 000001",
    /// "4812", "task-1003"), then tidies the spaces.
    public static func clean(_ text: String) -> String {
        let characters = Array(text)
        var output: [Character] = []
        var index = 0
        func isPhoneCharacter(_ character: Character) -> Bool { character.isNumber || " +-()/.".contains(character) }
        while index < characters.count {
            let opensNumber = characters[index] == "+" || characters[index] == "("
                && index + 1 < characters.count && characters[index + 1].isNumber
            guard characters[index].isNumber || opensNumber else {
                output.append(characters[index])
                index += 1
                continue
            }
            var end = index
            var digits = 0
            while end < characters.count, isPhoneCharacter(characters[end]) {
                if characters[end].isNumber { digits += 1 }
                end += 1
            }
            if digits >= 3 {
                // "task-1003" loses its hyphen with its number.
                if output.last == "-" { output.removeLast() }
                // Keep what follows the number readable: a trailing space or full stop stays.
                let kept = characters[index..<end].reversed().prefix { !$0.isNumber }.reversed()
                output.append(contentsOf: kept.filter { $0 == " " || $0 == "." })
            } else {
                output.append(contentsOf: characters[index..<end])
            }
            index = end
        }
        var text = String(output)
        // The standard library's string algorithms: Foundation's would link ICU into the kiosk.
        while text.firstRange(of: "  ") != nil { text = text.replacing("  ", with: " ") }
        text = text.replacing(" .", with: ".").replacing("-.", with: ".")
        return String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
