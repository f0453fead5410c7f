import ArgumentParser
import DriverAPI

struct SOS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sos",
        abstract: "Call for help: the backend hears it before anything else, with the position, until it acknowledges.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("What happened, at most \(SOSParams.maxNoteLength) characters.", valueName: "text"))
    var note: String?

    func run() throws {
        let view = try Session(options).call(Methods.sosRaise, SOSParams(note: note))
        try Output(options).emit(view) { SOSFormatter.raised(view) }
    }
}

enum SOSFormatter {
    /// What `driverctl sos` prints: what was stored and what happens next.
    static func raised(_ view: SOSView) -> String {
        [
            "SOS raised at \(GPSFormatter.utc(view.raisedAt)) (\(view.timeSource.rawValue) time), " + where_(view),
            "Sending now, ahead of everything else, and again until the backend acknowledges it (driverctl watch shows when).",
        ].joined(separator: "\n")
    }

    /// One line for the live view.
    static func change(_ view: SOSView) -> String {
        switch view.state {
        case .raised: "SOS raised, " + where_(view) + ": sending"
        case .acknowledged: "SOS acknowledged by the backend" + (view.acknowledgedAt.map { " at \(GPSFormatter.utc($0))" } ?? "")
        }
    }

    private static func where_(_ view: SOSView) -> String {
        guard let position = view.position else { return "without a position (GPS \(view.gps.rawValue))" }
        let accuracy = position.accuracy.map { " ±\(Int($0.rounded())) m" } ?? ""
        let age = position.ageSeconds >= 2 ? ", fix \(StatusFormatter.duration(position.ageSeconds)) old" : ""
        return "at \(TextFormat.fixed(position.lat, decimals: 5)), \(TextFormat.fixed(position.lng, decimals: 5))\(accuracy)\(age)"
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let sosCommands: [any ParsableCommand.Type] = [SOS.self]
}
