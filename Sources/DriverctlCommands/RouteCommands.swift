#if canImport(Glibc)
import Glibc
#endif
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

struct Navigate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Hand the next stop (or --stop) to a navigation app.")
    @OptionGroup var options: GlobalOptions

    enum App: String, ExpressibleByArgument, CaseIterable {
        case google, apple, waze, geo, web
    }

    @Option(name: .long, help: "google, apple, waze, geo or web (Google Maps in a browser).")
    var app: App = .geo

    @Option(name: .long, help: "A stop id (default: the next stop).")
    var stop: String?

    @Flag(name: .long, help: "Open the link with xdg-open.")
    var open = false

    func run() throws {
        let result = try Session(options).call(Methods.navLinks, NavParams(stopId: stop))
        let link = switch app {
        case .google: result.links.google
        case .apple: result.links.apple
        case .waze: result.links.waze
        case .geo: result.links.geo
        case .web: result.links.googleWeb
        }
        try Output(options).emit(result) { link }
        if open { try Self.xdgOpen(link) }
    }

    static func xdgOpen(_ link: String) throws {
        var pid = pid_t()
        let arguments = ["xdg-open", link]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawnp(&pid, "xdg-open", nil, nil, &argv, environ) == 0 else {
            throw ValidationError("cannot run xdg-open (is xdg-utils installed?)")
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else { throw ValidationError("xdg-open could not open \(link)") }
    }
}

struct Visits: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the latest visits to stops: arrival (by geofence or by the driver), how long, and whether sent.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let list = try Session(options).call(Methods.visitsList, NoParams())
        try Output(options).emit(list) { RouteFormatter.visits(list) }
    }
}

struct Trips: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the latest trips and idle periods, and whether the backend has them.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let list = try Session(options).call(Methods.tripsList, NoParams())
        try Output(options).emit(list) { RouteFormatter.trips(list) }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let routeCommands: [any ParsableCommand.Type] = [Next.self, RouteCommand.self, Navigate.self, Visits.self, Trips.self]
}
