import DriverAPI

/// What is wrong with a unit, worst first, in the words of docs/OPERATIONS.md: from the unit's health report and what only
/// a backend knows (when it last heard the unit, the fleet's current release). One pure function: the unit's own view
/// (`agent.health`, `driverctl health`) and the reference backend's fleet view use it, and a fleet's real backend would
/// adopt the same rules.
public enum HealthRules {
    public struct Thresholds: Sendable, Equatable {
        /// A report later than its promise by more than this is silence (seconds).
        public var silentGrace = 60.0
        /// Something has waited to be sent longer than this (seconds).
        public var queueAge = 3600.0
        /// A certificate expiring within this (seconds) is said.
        public var certificateNotice = 7 * 86400.0
        /// This many runs ending without a clean stop in 24 h is a unit restarting.
        public var restarts = 3
        /// On shift without a usable fix for longer than this (seconds).
        public var gpsLost = 300.0

        public init() {}
    }

    /// - Parameters: `lastHeard`: when the backend last heard the unit (nil: the unit's own view, which cannot be
    ///   silent to itself); `fleetRelease`: the release the fleet runs (nil: not known).
    public static func findings(
        _ health: UnitHealth, now: Double, lastHeard: Double? = nil, fleetRelease: String? = nil, thresholds: Thresholds = Thresholds()
    ) -> [HealthFinding] {
        var found: [HealthFinding] = []
        if let lastHeard, now - lastHeard > health.nextReportWithin + thresholds.silentGrace {
            found.append(HealthFinding(
                rule: .silent, severity: .attention,
                words: "silent for \(duration(now - lastHeard)) (it promised a report within \(duration(health.nextReportWithin)))"))
        }
        let store = health.store
        switch store.condition {
        case .full:
            found.append(HealthFinding(rule: .storeFull, severity: .attention, words: "storage \(store.summary)", forDriver: !store.canSave))
        case .readOnly:
            found.append(HealthFinding(rule: .storeReadOnly, severity: .attention, words: "storage \(store.summary)", forDriver: true))
        case .failing:
            found.append(HealthFinding(rule: .storeFailing, severity: .attention, words: "storage \(store.summary)", forDriver: true))
        case .nearlyFull:
            found.append(HealthFinding(rule: .storeNearlyFull, severity: .notice, words: "storage \(store.summary)"))
        case .ok:
            break
        }
        let queue = health.queue
        if let age = queue.oldestAgeSeconds, age > thresholds.queueAge, queue.items + queue.pings > 0 {
            found.append(HealthFinding(
                rule: .queueOld, severity: .attention,
                words: "changes waiting to be sent for \(duration(age)) (\(count(queue.items, "item")), \(count(queue.pings, "ping")))"))
        }
        if let certificate = health.certificate {
            switch certificate.state {
            case .refused:
                found.append(HealthFinding(
                    rule: .certificateRefused, severity: .attention,
                    words: "the unit's certificate was refused: \(certificate.reason ?? "no reason given"); check backend.claim_token", forDriver: true))
            case .revoked:
                found.append(HealthFinding(
                    rule: .certificateRefused, severity: .attention, words: "the unit's certificate was revoked by the fleet", forDriver: true))
            case .enrolled, .enrolling:
                if let notAfter = certificate.notAfter, notAfter - now < thresholds.certificateNotice {
                    let words = notAfter <= now
                        ? "the unit's certificate expired \(duration(now - notAfter)) ago and is not renewed"
                        : "the unit's certificate expires in \(duration(notAfter - now))"
                    // Expired, nothing the unit does reaches the office until it is renewed: the driver should know.
                    found.append(HealthFinding(
                        rule: .certificateExpiring, severity: notAfter <= now ? .attention : .notice, words: words, forDriver: notAfter <= now))
                }
            }
        }
        let unclean = health.restarts.filter { $0.startedAt > now - 86400 && ($0.cause == .crash || $0.cause == .powerCut) }
        if !unclean.isEmpty {
            let crashes = unclean.count { $0.cause == .crash }, cuts = unclean.count - crashes
            let causes = [crashes > 0 ? count(crashes, "crash", "crashes") : nil, cuts > 0 ? count(cuts, "power cut") : nil].compactMap { $0 }
            found.append(HealthFinding(
                rule: .restarting, severity: unclean.count >= thresholds.restarts ? .attention : .notice,
                words: "restarted \(count(unclean.count, "time")) in 24 h without a clean stop (\(causes.joined(separator: ", ")))"))
        }
        if health.onShift {
            let age = health.gps.lastFixAgeSeconds
            // Without a position for that long: since the last fix, or since the start when there was none (a unit just
            // started is still finding gpsd, not lost).
            if (age ?? health.uptimeSeconds) > thresholds.gpsLost {
                let receiver = switch health.gps.link {
                case .lost, .connecting: "no receiver (gpsd)"
                case .noFix: "the receiver has no fix"
                case .connected: "no usable fix"
                }
                let since = age.map { " for \(duration($0))" } ?? ""
                // No receiver is the unit's fault (a cable, gpsd): the driver calls. No fix is the sky's (a depot, a
                // tunnel): the strip already says "no position", and it passes.
                let noReceiver = health.gps.link == .lost || health.gps.link == .connecting
                found.append(HealthFinding(rule: .gpsLost, severity: .attention, words: "no GPS position\(since) on shift: \(receiver)", forDriver: noReceiver))
            }
        }
        if queue.deadLetters > 0 {
            found.append(HealthFinding(
                rule: .deadLetters, severity: .attention,
                words: "\(count(queue.deadLetters, "change")) refused by the backend (driverctl dead-letters shows each)", forDriver: true))
        }
        if let fleetRelease, fleetRelease != health.daemonVersion {
            found.append(HealthFinding(rule: .releaseBehind, severity: .notice, words: "runs driverd \(health.daemonVersion), the fleet's release is \(fleetRelease)"))
        }
        // Worst first; within a severity, in the order above (the order a technician would check them).
        return found.enumerated().sorted { ($0.element.severity, $0.offset) < ($1.element.severity, $1.offset) }.map(\.element)
    }

    /// "45 s", "12 min", "3 h", "2 days" (the fleet page's ages too).
    public static func duration(_ value: Double) -> String {
        // A report is outside input to a backend: no figure of it may trap a conversion.
        let seconds = value.isFinite ? min(max(0, value), 1e12) : 0
        return switch seconds {
        case ..<90: "\(Int(seconds.rounded())) s"
        case ..<5400: "\(Int((seconds / 60).rounded())) min"
        case ..<172_800: "\(Int((seconds / 3600).rounded())) h"
        default: "\(Int((seconds / 86400).rounded())) days"
        }
    }

    static func count(_ n: Int, _ noun: String, _ plural: String? = nil) -> String { "\(n) \(n == 1 ? noun : plural ?? noun + "s")" }
}
