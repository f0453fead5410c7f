import ArgumentParser
import DriverAPI

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
    static let tripsCommands: [any ParsableCommand.Type] = [Trips.self]
}
