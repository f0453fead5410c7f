import DriverAPI

/// How a route's stops follow from its tasks' statuses (design brief §3.3), pure.
public enum RouteRules {
    /// Whether a stop still has to be visited. A failed delivery sends the driver back to the vendor, so
    /// its pickup opens again until the goods are returned.
    public static func isOpen(_ kind: StopKind, task status: TaskStatus) -> Bool {
        switch kind {
        case .pickup: [.assigned, .accepted, .arrivedAtStore, .deliveryFailed].contains(status)
        case .dropoff: [.assigned, .accepted, .arrivedAtStore, .pickedUp, .arrivedAtDestination].contains(status)
        }
    }

    /// A stop's status for the UI: `en-route` for the next stop while the driver heads there (an offered task
    /// the driver has not accepted is not on the way yet).
    public static func stopStatus(_ kind: StopKind, task status: TaskStatus, isNext: Bool) -> StopStatus {
        switch (kind, status) {
        case (_, .cancelled): .failed
        case (.pickup, .assigned): .pending
        case (.pickup, .accepted), (.pickup, .deliveryFailed): isNext ? .enRoute : .pending
        case (.pickup, .arrivedAtStore): .arrived
        case (.pickup, .returnedToVendor): .failed
        case (.pickup, _): .pickedUp
        case (.dropoff, .pickedUp): isNext ? .enRoute : .pending
        case (.dropoff, .arrivedAtDestination): .arrived
        case (.dropoff, .delivered): .delivered
        case (.dropoff, .deliveryFailed), (.dropoff, .returnedToVendor): .failed
        case (.dropoff, _): .pending
        }
    }

    /// The stops still to visit, in the route's order. Stops the sequence leaves out (a task it does not
    /// know yet) follow in the order given by `fallback`.
    public static func openStops(
        sequence: [String], fallback: [String], parse: (String) -> (taskId: String, kind: StopKind)?, status: (String) -> TaskStatus?
    ) -> [String] {
        var seen = Set<String>()
        return (sequence + fallback).filter { stopId in
            seen.insert(stopId).inserted && isOpen(stopId, parse: parse, status: status)
        }
    }

    /// The first of `openStops`, without listing them: every view of a task names the next stop, and the
    /// fallback (sorting every task) is made only when the sequence has no open stop.
    public static func firstOpenStop(
        sequence: [String], fallback: () -> [String], parse: (String) -> (taskId: String, kind: StopKind)?, status: (String) -> TaskStatus?
    ) -> String? {
        if let first = sequence.first(where: { isOpen($0, parse: parse, status: status) }) { return first }
        return fallback().first { isOpen($0, parse: parse, status: status) }
    }

    private static func isOpen(
        _ stopId: String, parse: (String) -> (taskId: String, kind: StopKind)?, status: (String) -> TaskStatus?
    ) -> Bool {
        guard let (taskId, kind) = parse(stopId), let current = status(taskId) else { return false }
        return isOpen(kind, task: current)
    }

    /// Why `order` is not a valid stop order for the stops `current` (nil when it is): every stop once and
    /// each pickup before its drop-off. The backend and the daemon check the same rule.
    public static func sequenceProblem(
        _ order: [String], current: [String], parse: (String) -> (taskId: String, kind: StopKind)?
    ) -> String? {
        guard order.count == current.count, Set(order) == Set(current) else {
            return "the order must hold each active stop once: \(current.joined(separator: ", "))"
        }
        for (index, stopId) in order.enumerated() {
            guard let (taskId, kind) = parse(stopId), kind == .pickup else { continue }
            let dropoff = "\(taskId)-\(StopKind.dropoff.rawValue)"
            if let position = order.firstIndex(of: dropoff), position < index { return "\(dropoff) comes before \(stopId)" }
        }
        return nil
    }
}
