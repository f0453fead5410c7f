import ArgumentParser
import DriverAPI
import DriverDomain

/// The renewal requests a fleet's backend sees over a year, on virtual time: every unit runs the daemon's own
/// `CertificateRenewal` (a random point between 50 % and 80 % of each certificate's life), beside two rules without
/// jitter in the same run (at 80 % of the life, as Azure IoT Edge does by default; at half the life).
struct RenewalBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "renewals", abstract: "A fleet's certificate renewals over a year.")

    @Option(help: "Units in the fleet.") var units = 10_000
    @Option(help: "Lifetime of a certificate, days.") var lifeDays = 30.0
    @Option(help: "The units enrol within this many hours (a fleet provisioned in one afternoon: 4).") var enrolHours = 4.0
    @Option(help: "Days simulated.") var days = 365.0
    @Option(help: "Seed of every unit's randomness.") var seed: UInt64 = 1

    enum Rule: CaseIterable {
        case driverd, at80, atHalf
        var label: String {
            switch self {
            case .driverd: "driverd (50-80 %, random)"
            case .at80: "at 80 %, no jitter"
            case .atHalf: "at 50 %, no jitter"
            }
        }
    }

    func run() {
        let life = lifeDays * 86400, horizon = days * 86400
        say("\(units) units enrolling within \(TextFormat.fixed(enrolHours, decimals: 1)) h, certificates of \(TextFormat.fixed(lifeDays, decimals: 0)) days, \(TextFormat.fixed(days, decimals: 0)) days simulated")
        say("rule                        | renewals/unit/year | mean/h | peak/h | peak/h after the first 60 days | busiest hours (share of renewals in the top 1 % of hours)")
        for rule in Rule.allCases {
            var random = SplitMix64(seed: seed)
            var perHour: [Int: Int] = [:]
            var total = 0
            for _ in 0..<units {
                var notBefore = random.nextUnit() * enrolHours * 3600
                while true {
                    let renewAt: Double = switch rule {
                    case .driverd: CertificateRenewal(notBefore: notBefore, notAfter: notBefore + life, random: random.nextUnit()).renewAt
                    case .at80: notBefore + 0.8 * life
                    case .atHalf: notBefore + 0.5 * life
                    }
                    guard renewAt < horizon else { break }
                    perHour[Int(renewAt / 3600), default: 0] += 1
                    total += 1
                    notBefore = renewAt
                }
            }
            let hours = Int(horizon / 3600)
            let counts = (0..<hours).map { perHour[$0] ?? 0 }
            let later = counts.dropFirst(60 * 24)
            let top = counts.sorted(by: >).prefix(max(1, hours / 100)).reduce(0, +)
            say([
                rule.label.padding(toLength: 27, withPad: " ", startingAt: 0),
                TextFormat.fixed(Double(total) / Double(units), decimals: 1).padding(toLength: 18, withPad: " ", startingAt: 0),
                TextFormat.fixed(Double(total) / Double(hours), decimals: 1).padding(toLength: 6, withPad: " ", startingAt: 0),
                "\(counts.max() ?? 0)".padding(toLength: 6, withPad: " ", startingAt: 0),
                "\(later.max() ?? 0)".padding(toLength: 30, withPad: " ", startingAt: 0),
                TextFormat.fixed(100 * Double(top) / Double(max(total, 1)), decimals: 1) + " %",
            ].joined(separator: " | "))
        }
    }
}
