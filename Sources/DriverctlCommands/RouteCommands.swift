import ArgumentParser
import DriverAPI

struct Next: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the next stop: where, who, when, and the one thing to do.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let next = try Session(options).call(Methods.routeNext, NoParams())
        try Output(options).emit(next) { RouteFormatter.card(next) }
    }
}

struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route", abstract: "Show the stops still to visit, in order; or change the order.")
    @OptionGroup var options: GlobalOptions

    @Option(name: .long, parsing: .upToNextOption, help: "A new order: every stop id still to visit, each pickup before its drop-off.")
    var resequence: [String] = []

    @Flag(name: .long, help: "Apply the new order (without it, only its ETAs are shown).")
    var confirm = false

    func run() throws {
        guard !resequence.isEmpty else {
            if confirm { throw ValidationError("--confirm goes with --resequence") }
            let route = try Session(options).call(Methods.routeGet, NoParams())
            try Output(options).emit(route) { RouteFormatter.queue(route) }
            return
        }
        let result = try Session(options).call(Methods.routeResequence, ResequenceParams(order: resequence, confirm: confirm))
        try Output(options).emit(result) { RouteFormatter.resequence(result) }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let routeCommands: [any ParsableCommand.Type] = [Next.self, RouteCommand.self]
}
