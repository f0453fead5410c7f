#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import DriverAPI
import JSONRPC

/// A live view that reads at a glance: the next stop, the queue, the link and sync state, the shift and the
/// safety gate, and pushes as they come. Redrawn in place on a terminal; plain lines otherwise.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Live view: next stop, queue, link, shift, pushes (Ctrl-C to leave).")
    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Seconds between refreshes when nothing happens (ETA, ages).")
    var refresh: Double = 2

    @Option(name: .long, help: "Stop after this many seconds (default: run until interrupted).")
    var seconds: Double?

    static let topics = [
        Events.push.topic, Events.pushSummary.topic, Events.routeUpdated.topic, Events.taskConflict.topic,
        Events.outboxRefused.topic, Events.authRequired.topic, Events.podVerdict.topic, Events.arrivalSuggested.topic,
        Events.stopLeftUnfinished.topic, Events.visitChanged.topic, Events.tripRecorded.topic, Events.sosChanged.topic,
    ]

    func run() throws {
        guard refresh >= 0.2 else { throw ValidationError("--refresh: at least 0.2 seconds") }
        let queries = try Session(options)
        let events = try Session(options, timeout: .milliseconds(Int(refresh * 1000)))
        _ = try events.call(Methods.eventsSubscribe, SubscribeParams(topics: Self.topics))
        let terminal = isatty(STDOUT_FILENO) == 1
        var view = WatchView()
        let start = ContinuousClock.now
        var lastDraw = ContinuousClock.now - .seconds(3600)
        var lastQuery = lastDraw
        var outbox: OutboxStatus?, status: AgentStatus?
        while seconds.map({ ContinuousClock.now - start < .seconds($0) }) ?? true {
            if let (topic, params) = try events.nextNotification() {
                let line = view.note(topic, params)
                if !terminal, let line { Environment.printLine(line) }
            }
            guard terminal || ContinuousClock.now - lastDraw >= .seconds(refresh) || view.changed else { continue }
            // The card comes with every change (route.updated); the link, the queue and the ETA's age are read on the
            // refresh's rhythm, not once per notification.
            if view.next == nil || outbox == nil || ContinuousClock.now - lastQuery >= .seconds(refresh) {
                view.next = try queries.call(Methods.routeNext, NoParams())
                outbox = try queries.call(Methods.outboxStatus, NoParams())
                status = try queries.call(Methods.agentStatus, NoParams())
                lastQuery = .now
            }
            guard let next = view.next, let outbox, let status else { continue }
            let screen = view.render(next: next, outbox: outbox, status: status)
            if terminal {
                Environment.printLine("\u{1B}[H\u{1B}[2J" + screen)
            } else if view.changed || ContinuousClock.now - lastDraw >= .seconds(30) {
                Environment.printLine(screen.split(separator: "\n").prefix(2).joined(separator: " | "))
            }
            view.changed = false
            lastDraw = .now
        }
    }
}

/// What the watch shows, kept between redraws.
struct WatchView {
    var pushes: [PushEvent] = []
    var summary: PushSummary?
    var notes: [String] = []
    var changed = true
    /// The next stop's card, as the last `route.updated` (or `route.next`) gave it.
    var next: RouteNext?

    /// Takes a notification in; returns a line for plain output.
    mutating func note(_ topic: String, _ params: JSONValue?) -> String? {
        changed = true
        let bytes = params.map { JSONWriter.bytes($0) } ?? []
        // Each try? below is the expected "not this release's shape" (a newer driverd): such a line is passed over.
        switch topic {
        case Events.push.topic, Events.stopLeftUnfinished.topic:
            guard let push = try? Events.push.decode(bytes) else { return nil }
            pushes.removeAll { $0.id == push.id }
            pushes.append(push)
            summary = nil
            return "push #\(push.id): \(push.title)" + (push.message.map { ": \($0)" } ?? "")
        case Events.pushSummary.topic:
            summary = try? Events.pushSummary.decode(bytes)
            return summary.map { "waiting while driving: \($0.summary)" }
        case Events.routeUpdated.topic:
            next = (try? Events.routeUpdated.decode(bytes))?.next ?? next
            return nil
        case Events.arrivalSuggested.topic:
            guard let arrival = try? Events.arrivalSuggested.decode(bytes) else { return nil }
            return remember("arrival detected at \(arrival.stopId), \(Int(arrival.distanceMeters)) m from it"
                + (arrival.mode == .auto ? " (arrived)" : ": confirm with driverctl arrive --task \(arrival.taskId)"))
        case Events.visitChanged.topic:
            return remember((try? Events.visitChanged.decode(bytes)).map(RouteFormatter.visitChange))
        case Events.tripRecorded.topic:
            return remember((try? Events.tripRecorded.decode(bytes)).map(RouteFormatter.tripEnded))
        case Events.sosChanged.topic:
            return remember((try? Events.sosChanged.decode(bytes)).map(SOSFormatter.change))
        case Events.taskConflict.topic, Events.outboxRefused.topic, Events.authRequired.topic, Events.podVerdict.topic:
            return remember("\(topic): " + String(decoding: bytes, as: UTF8.self))
        default:
            return nil
        }
    }

    /// The newest notes stay on screen (three of them).
    private mutating func remember(_ text: String?) -> String? {
        guard let text else { return nil }
        notes = Array((notes + [text]).suffix(3))
        return text
    }

    func render(next: RouteNext, outbox: OutboxStatus, status: AgentStatus) -> String {
        var lines: [String] = []
        let shift = status.shiftStatus.map { $0.onShift ? "ON SHIFT" : "OFF SHIFT" } ?? "shift ?"
        let safety = status.safety.map { safety -> String in
            switch safety.state {
            case .moving: "DRIVING \(TextFormat.fixed(safety.speed ?? 0, decimals: 0)) m/s"
            case .stationary: "stopped"
            case .stopping: "stopping"
            case .unknown: "speed unknown"
            }
        } ?? ""
        let link = outbox.enabled ? "\(outbox.link.rawValue) (\(outbox.transport.rawValue))" : "no backend"
        let queued = outbox.items
        lines.append("\(shift) · \(safety) · link \(link) · \(queued == 0 ? "all sent" : "\(queued) to send")")
        lines.append(String(repeating: "─", count: 60))
        lines.append(RouteFormatter.card(next))
        lines.append(String(repeating: "─", count: 60))
        if let summary, summary.held > 0 {
            lines.append("WAITING (pull over to read): \(summary.summary)")
        }
        for push in pushes.suffix(3) {
            lines.append("#\(push.id) \(push.title)" + (push.message.map { ": \($0)" } ?? "") + "   (driverctl ack \(push.id))")
        }
        lines += notes
        return lines.joined(separator: "\n")
    }
}

extension Session {
    /// The next notification, or nil when none came within the session's timeout.
    func nextNotification() throws -> (String, JSONValue?)? {
        do {
            let message = try client.readReply()
            guard case .string(let method) = message["method"] else { return nil }
            return (method, message["params"])
        } catch .timedOut {
            return nil
        } catch .closed {
            Environment.printError("driverctl: driverd closed the connection (it stopped or restarted); run driverctl watch again")
            throw ExitCode(1)
        } catch {
            Environment.printError("driverctl: the connection to driverd failed: \(error)")
            throw ExitCode(1)
        }
    }
}

struct Ack: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Acknowledge a message or order notice (driverctl watch shows their ids).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The push id.") var id: Int

    func run() throws {
        let summary = try Session(options).call(Methods.eventsAck, AckParams(id: id))
        try Output(options).emit(summary) { summary.pending == 0 ? "nothing else waits" : "still waiting: \(summary.summary)" }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let eventsCommands: [any ParsableCommand.Type] = [Watch.self, Ack.self]
}
