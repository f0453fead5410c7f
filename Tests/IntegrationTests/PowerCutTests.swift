import Foundation
import Testing

/// A driver's shift with the power cut at random moments (`PowerCutJourney`): nothing the unit acknowledged is
/// lost or sent twice, the store stays whole, no file is torn, and pings are lost only inside the commit window.
/// `DRIVERD_POWERCUT_CUTS` sets the cuts per seed (`make soak` runs 1,000 per seed), `DRIVERD_POWERCUT_SEEDS` the seeds.
@Suite("Power cuts", .ownThread)
struct PowerCutTests {
    static let cutsPerSeed = ProcessInfo.processInfo.environment["DRIVERD_POWERCUT_CUTS"].flatMap { Int($0) } ?? 50
    /// `DRIVERD_POWERCUT_SEEDS=11` runs one seed again (a failure's), alone.
    static let seeds = ProcessInfo.processInfo.environment["DRIVERD_POWERCUT_SEEDS"].map { $0.split(separator: ",").compactMap { UInt64($0) } } ?? [11, 29]

    @Test("a shift of orders, SOS calls, logins, configuration trials and bundles through power cuts at random moments", .tags(.longest), arguments: seeds)
    func journey(seed: UInt64) throws {
        let report = try PowerCutJourney(PowerCutJourney.Settings(seed: seed, cuts: Self.cutsPerSeed)).run()
        print("power-cut soak, seed \(seed): \(report)")
        #expect(report.cuts == Self.cutsPerSeed)
        #expect(report.acknowledgedTransitions > report.cuts / 5, "the driver got on with the work: \(report)")
        #expect(report.lostAcknowledged.isEmpty, "\(report.lostAcknowledged.prefix(20))")
        #expect(report.duplicates.isEmpty, "\(report.duplicates.prefix(20))")
        #expect(report.deadLetters == 0, "dead letters: \(report.deadLetters): \(report.deadLetterAnswers.prefix(20))")
        #expect(report.integrityFailures == 0)
        #expect(report.tornFiles.isEmpty, "\(report.tornFiles.prefix(20))")
        #expect(report.pingsLostOutsideWindow.isEmpty, "\(report.pingsLostOutsideWindow.count): \(report.pingsLostOutsideWindow.prefix(20))")
    }
}
