import ArgumentParser
import Foundation

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "driverd-bench",
        abstract: "driverd's benchmarks. Every figure is printed beside a baseline measured in the same run.",
        subcommands: [RPCBench.self, GPSBench.self, EchoServer.self])
}
