import ArgumentParser
import DriverAPI
import JSONRPC

struct GPSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gps", abstract: "Show the GPS link, the last fix and the recording counters.")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Keep printing each recorded fix as it arrives (Ctrl-C to stop).")
    var follow = false

    @Option(name: .long, help: "With --follow: ask the daemon for at least this rate while following (hz).")
    var rate: Double?

    func run() throws {
        let session = try Session(options, timeout: follow ? nil : .seconds(10))
        guard follow else {
            let status = try session.call(Methods.gpsStatus, NoParams())
            try Output(options).emit(status) { GPSFormatter.details(status) }
            return
        }
        if let rate { _ = try session.callUnchecked(Methods.gpsRequestRate, RequestRateParams(hz: rate)) }
        _ = try session.callUnchecked(Methods.eventsSubscribe, SubscribeParams(topics: [Events.gpsFix.topic]))
        try session.follow { method, params in
            // A fix of another release's shape is passed over (expected from a newer driverd).
            guard method == Events.gpsFix.topic, let params, let fix = try? Events.gpsFix.decode(params) else { return }
            // Straight to the descriptor: a follower is often piped or killed, and a buffered line would be lost.
            Environment.printLine(options.json ? JSONWriter.string(params) : "\(GPSFormatter.utc(fix.time))  \(GPSFormatter.fixLine(fix))")
        }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let gpsCommands: [any ParsableCommand.Type] = [GPSCommand.self]
}
