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
        subcommands: agentCommands + gpsCommands + eventsCommands + outboxCommands + authCommands + routeCommands
            + navCommands + taskCommands + podCommands + visitsCommands + tripsCommands + shiftCommands + sosCommands
            + configCommands + diagCommands + vehicleCommands + updateCommands)

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
