import ArgumentParser
import DriverAPI

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what the daemon is doing.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let status = try Session(options).call(Methods.agentStatus, NoParams())
        try Output(options).emit(status) { StatusFormatter.text(status) }
    }
}

struct Describe: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the daemon's version and API version.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let description = try Session(options).callUnchecked(Methods.agentDescribe, NoParams())
        try Output(options).emit(description) {
            """
            driverd \(description.daemonVersion), API \(description.apiMajor).\(description.apiMinor) \
            (driverctl speaks \(APIVersion.major).\(APIVersion.minor))
            """
        }
    }
}

struct LogLevelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-level", abstract: "Change the daemon's log level until it restarts.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "trace, debug, info, notice, warning, error or critical.")
    var level: LogLevel

    func run() throws {
        let result = try Session(options).call(Methods.agentSetLogLevel, SetLogLevelParams(level: level))
        try Output(options).emit(result) { "log level: \(result.previous.rawValue) -> \(result.current.rawValue)" }
    }
}

extension LogLevel: ExpressibleByArgument {}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let agentCommands: [any ParsableCommand.Type] = [Status.self, Describe.self, LogLevelCommand.self]
}
