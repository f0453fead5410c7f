import BackendContract
import DriverAPI
import DriverDomain

/// What became of a visit, trip or idle report.
public enum ReportOutcome: Codable, Sendable, Equatable {
    case accepted(ReportAccepted)
    /// 400: the stop is not one of the task's, or the times or distances do not add up.
    case invalid(String)
    /// 422: the key was used with another body.
    case keyReused
    case notFound
}

/// A visit as the backend stored it.
public struct VisitReceipt: Codable, Sendable, Equatable {
    public var driverId: String
    public var idempotencyKey: String
    public var report: VisitReport
    public var receivedAt: Double
}

/// Visits and their idempotency ledger. Optional in the world, so a `--state` file written before visits
/// existed still loads.
struct VisitLog: Codable, Sendable {
    var ledger = IdempotencyLedger<ReportOutcome>()
    var visits: [VisitReceipt] = []
}

extension SimWorld {
    /// Every visit received (first copies), oldest first.
    public var visits: [VisitReceipt] { visitLog?.visits ?? [] }

    var visitLedger: IdempotencyLedger<ReportOutcome> {
        get { visitLog?.ledger ?? IdempotencyLedger() }
        set {
            var log = visitLog ?? VisitLog()
            log.ledger = newValue
            visitLog = log
        }
    }

    /// A visit under an idempotency key: stored once; a replay gets the first answer.
    public mutating func recordVisit(
        _ report: VisitReport, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.visitLedger, key: idempotencyKey, digest: bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.record(taskId: report.taskId, driverId: driverId) != nil else { return .notFound }
            guard let (taskId, _) = Stop.parse(report.stopId), taskId == report.taskId else {
                return .invalid("stop \(report.stopId) is not a stop of task \(report.taskId)")
            }
            guard report.departedAt >= report.arrivedAt, report.dwellSeconds >= 0, report.arrivedAt.isFinite, report.departedAt.isFinite,
                  report.arrivalDistance.map({ $0 >= 0 }) ?? true
            else {
                return .invalid("departedAt must not be before arrivedAt, and dwellSeconds and arrivalDistance not negative")
            }
            var log = world.visitLog ?? VisitLog()
            log.visits.append(VisitReceipt(driverId: driverId, idempotencyKey: idempotencyKey, report: report, receivedAt: now))
            world.visitLog = log
            return .accepted(ReportAccepted(id: report.visitId, receivedAt: now))
        }
    }
}
