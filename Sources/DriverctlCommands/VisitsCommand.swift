import ArgumentParser
import DriverAPI

struct Visits: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the latest visits to stops: arrival (by geofence or by the driver), how long, and whether sent.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let list = try Session(options).call(Methods.visitsList, NoParams())
        try Output(options).emit(list) { RouteFormatter.visits(list) }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let visitsCommands: [any ParsableCommand.Type] = [Visits.self]
}
