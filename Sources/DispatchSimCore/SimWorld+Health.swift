import BackendContract
import DriverAPI
import DriverDomain
import Foundation

/// Each unit's newest health report and the fleet view over them (`GET /api/v1/fleet/health`, the `/fleet` page).
struct HealthLog: Codable, Sendable {
    struct Entry: Codable, Sendable, Equatable {
        var report: UnitHealthReport
        var receivedAt: Double
    }

    var newest: [String: Entry] = [:]
    var ledger = IdempotencyLedger<ReportOutcome>()
}

extension SimWorld {
    var healthLedger: IdempotencyLedger<ReportOutcome> {
        get { healthLog?.ledger ?? IdempotencyLedger() }
        set {
            var log = healthLog ?? HealthLog()
            log.ledger = newValue
            healthLog = log
        }
    }

    /// Keeps the unit's report when it is newer than the one kept (reports may arrive out of order after an outage).
    public mutating func recordHealth(
        _ report: UnitHealthReport, driverId: String, idempotencyKey: String, bodyDigest: String, wireBytes: Int? = nil, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.healthLedger, key: idempotencyKey, digest: "health:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.driver(id: driverId) != nil else { return .notFound }
            let health = report.health
            let ages = [health.uptimeSeconds, health.queue.oldestAgeSeconds ?? 0, health.gps.lastFixAgeSeconds ?? 0]
            guard health.generatedAt.isFinite, (1...604_800).contains(health.nextReportWithin), ages.allSatisfy({ $0.isFinite && $0 >= 0 }),
                  health.queue.items >= 0, health.queue.pings >= 0, health.queue.deadLetters >= 0, health.restarts.count <= 10_000
            else {
                return .invalid("generatedAt must be a number, nextReportWithin 1 to 604800 s, ages and counts not negative")
            }
            var log = world.healthLog ?? HealthLog()
            if let kept = log.newest[driverId], kept.report.health.generatedAt > report.health.generatedAt {
                // An older report that came late: taken (acked), not kept.
            } else {
                log.newest[driverId] = HealthLog.Entry(report: report, receivedAt: now)
            }
            // lastReportAt stays the last batch of pings (its nextReportDue is counted from it); the fleet view takes
            // whichever of the two came last.
            world.healthLog = log
            if let wireBytes {
                world.stats.healthReports.append(.init(driverId: driverId, time: now, bytes: wireBytes))
                if world.stats.healthReports.count > 10_000 { world.stats.healthReports.removeFirst() }
            }
            return .accepted(ReportAccepted(id: report.reportId, receivedAt: now))
        }
    }

    /// Every unit that reported, with what is wrong with it (`HealthRules`, with when the backend last heard it and the
    /// fleet's release), units needing attention first.
    public func fleetHealth(now: Double) -> FleetHealthView {
        let release = fleetRelease
        let units = (healthLog?.newest ?? [:]).map { driverId, entry in
            let lastHeard = max(entry.receivedAt, lastReportAt[driverId] ?? 0)
            return FleetHealthView.Unit(
                unit: driverId, lastHeard: lastHeard,
                findings: HealthRules.findings(entry.report.health, now: now, lastHeard: lastHeard, fleetRelease: release),
                health: entry.report.health)
        }
        return FleetHealthView(generatedAt: now, fleetRelease: release, units: FleetHealthView.ordered(units))
    }

    /// The newest driverd release staged for the fleet, by version (nil: none staged).
    var fleetRelease: String? {
        stagedReleases.values
            .compactMap { try? JSONDecoder().decode(ReleaseManifest.self, from: Data($0.payload.utf8)) }  // one that does not parse is no release
            .filter { $0.package == "driverd" }
            .compactMap { DebianVersion($0.version) }
            .max()
            .map(\.description)
    }
}
