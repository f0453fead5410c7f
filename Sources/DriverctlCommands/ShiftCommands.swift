import ArgumentParser
import DriverAPI

struct ShiftCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shift", abstract: "Start or end the shift (off shift no location is recorded or sent).")

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case start, end, status
    }

    @OptionGroup var options: GlobalOptions
    @Argument(help: "start, end or status.") var action: Action = .status

    func run() throws {
        let method = switch action {
        case .start: Methods.shiftStart
        case .end: Methods.shiftEnd
        case .status: Methods.shiftStatus
        }
        let status = try Session(options, timeout: .seconds(90)).call(method, NoParams())
        try Output(options).emit(status) { Self.text(status) }
    }

    static func text(_ status: ShiftStatus) -> String {
        let head = status.onShift
            ? "on shift since " + (status.startedAt.map { TextFormat.UTC($0).iso8601 } ?? "?")
            : "off shift" + (status.endedAt.map { " since \(TextFormat.UTC($0).iso8601)" } ?? "") + ": no location is recorded or sent"
        guard let travel = status.travel else { return head }
        let bridged = travel.bridgedMeters > 0 ? " (\(RouteFormatter.metres(travel.bridgedMeters)) across gaps)" : ""
        let trips = StatusFormatter.plural(travel.trips, "trip") + (travel.tripInProgress ? ", one under way" : "")
        let idle = travel.idleSeconds > 0 ? ", idling \(StatusFormatter.duration(travel.idleSeconds))" : ""
        let harsh = travel.harshEvents > 0 ? ", " + StatusFormatter.plural(travel.harshEvents, "harsh driving event") : ""
        return head + "\n" + (status.onShift ? "this shift: " : "last shift: ") + RouteFormatter.metres(travel.odometerMeters) + bridged
            + ", " + trips + idle + harsh
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let shiftCommands: [any ParsableCommand.Type] = [ShiftCommand.self]
}
