import ArgumentParser
import DriverAPI

struct Queue: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what waits for the backend and how the link is.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let status = try Session(options).call(Methods.outboxStatus, NoParams())
        try Output(options).emit(status) { OutboxFormatter.text(status) }
    }
}

struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send what waits now, then show the queue.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        // A flush answers after its attempt, which may wait for a slow backend.
        let status = try Session(options, timeout: .seconds(90)).call(Methods.outboxFlush, NoParams())
        try Output(options).emit(status) { OutboxFormatter.text(status) }
    }
}

struct DeadLetters: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what the backend refused for good, and its answers.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let list = try Session(options).call(Methods.outboxDeadLetters, NoParams())
        try Output(options).emit(list) { OutboxFormatter.text(list) }
    }
}

enum OutboxFormatter {
    static func text(_ list: DeadLetterList) -> String {
        guard list.total > 0 else { return "the backend refused nothing" }
        let shown = list.items.count < list.total ? ", the newest \(list.items.count) shown" : ""
        let lines = list.items.map { item in
            "\(item.refusedAt.map { TextFormat.UTC($0).iso8601 } ?? "?")  \(item.kind) of \(item.taskId) (key \(item.idempotencyKey)): \(item.answer)"
        }
        return (["\(StatusFormatter.plural(list.total, "item")) the backend refused\(shown):"] + lines).joined(separator: "\n")
    }

    static func text(_ status: OutboxStatus) -> String {
        guard status.enabled else {
            return "no backend configured: \(StatusFormatter.plural(status.pings, "ping")), "
                + "\(StatusFormatter.plural(status.transitions, "transition")) kept locally"
        }
        var lines = [StatusFormatter.row("backend", "\(status.backend ?? "?") over \(status.transport): \(status.link)"
            + (status.driverId.map { ", driver \($0)" } ?? ", not logged in"))]
        if let sos = status.sos, sos > 0 {
            lines.append(StatusFormatter.row("SOS", "\(StatusFormatter.plural(sos, "call")) not yet acknowledged by the backend: sending"))
        }
        lines.append(StatusFormatter.row("queued", "\(StatusFormatter.plural(status.transitions, "transition")), "
            + "\(StatusFormatter.plural(status.proofs, "proof")), \(StatusFormatter.plural(status.pings, "ping"))"
            + ((status.routeChanges ?? 0) > 0 ? ", \(StatusFormatter.plural(status.routeChanges ?? 0, "route change"))" : "")
            + ((status.activity ?? 0) > 0 ? ", \(StatusFormatter.plural(status.activity ?? 0, "visit or trip record"))" : "")
            + (status.oldestPendingAgeSeconds.map { "; oldest \(StatusFormatter.duration($0)) old" } ?? "")))
        if status.deadLetters > 0 { lines.append(StatusFormatter.row("refused", StatusFormatter.plural(status.deadLetters, "item") + " the backend refused")) }
        lines.append(StatusFormatter.row("last ok", status.lastSuccess.map { TextFormat.UTC($0).iso8601 } ?? "never"))
        if let error = status.lastError { lines.append(StatusFormatter.row("error", error)) }
        if let retry = status.retryInSeconds { lines.append(StatusFormatter.row("retry", "in \(StatusFormatter.duration(retry))")) }
        return lines.joined(separator: "\n")
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let outboxCommands: [any ParsableCommand.Type] = [Queue.self, Sync.self, DeadLetters.self]
}
