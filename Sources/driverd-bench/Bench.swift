import ArgumentParser
import Foundation

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "driverd-bench",
        abstract: "driverd's benchmarks. Every figure is printed beside a baseline measured in the same run.",
        subcommands: [RPCBench.self, RadioBench.self, GPSBench.self, VehicleBench.self, GPSQualityBench.self, ArrivalBench.self, UplinkBench.self, LossBench.self, UrgentBench.self, FleetBench.self, FleetRealBench.self, RenewalBench.self, HandshakeBench.self, WorkflowBench.self, FlashBench.self, FlashBaseline.self, StorageBench.self, EchoServer.self])
}

/// Writes a line straight to standard output (unbuffered, so long runs show rows as they come).
func say(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
}
