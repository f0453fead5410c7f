import ArgumentParser
import DriverAPI

/// driverctl's root command. A library, so that one binary can be both programs: `driverctl` is a link to
/// `driverd` in the package (one copy of the Swift runtime, chosen by `argv[0]`), and its own small executable
/// in a development build. Like every front end, it speaks to the daemon only through DriverAPI and JSONRPC.
public struct Driverctl: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "driverctl",
        abstract: "Talk to driverd, the in-vehicle delivery agent.",
        version: "driverctl (API \(APIVersion.major).\(APIVersion.minor))",
        // Each file declares its commands; a new command touches only its file.
        subcommands: agentCommands + gpsCommands + eventsCommands + outboxCommands + authCommands + routeCommands + taskCommands
            + shiftCommands + sosCommands + configCommands + diagCommands + vehicleCommands + updateCommands)

    static let agentCommands: [any ParsableCommand.Type] = [Status.self, Describe.self, LogLevelCommand.self]

    // Declared here too so `driverctl --socket X status` works as well as `driverctl status --socket X`.
    @OptionGroup var options: GlobalOptions

    public init() {}
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("driverd's socket (default: $DRIVERD_SOCKET, then /run/driverd/driverd.sock).", valueName: "path"))
    var socket: String?

    @Flag(name: .long, help: "Print the daemon's answer as JSON, for scripts.")
    var json = false

    var socketPath: String { socket ?? Environment.value("DRIVERD_SOCKET") ?? "/run/driverd/driverd.sock" }
}

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
