import DriverAPI

/// The route for people: a card that reads at a glance, and a queue one stop per line.
enum RouteFormatter {
    static func place(_ stop: StopView) -> String { stop.kind == .pickup ? "Pick up at \(stop.name)" : "Deliver to \(stop.name)" }

    static func eta(_ eta: ETAView?) -> String {
        guard let eta else { return "ETA unknown (no fix)" }
        let minutes = Int((eta.seconds / 60).rounded(.up))
        let distance = eta.distanceMeters.map { $0 >= 1000 ? " · \(TextFormat.fixed($0 / 1000, decimals: 1)) km" : " · \(Int($0)) m" } ?? ""
        return "ETA \(eta.seconds < 60 ? "<1" : String(minutes)) min\(distance) (\(eta.source))"
    }

    static func card(_ next: RouteNext) -> String {
        guard let card = next.next else { return "No stops left. Waiting for orders." }
        let stop = card.stop, task = card.task
        let title = task.status == .deliveryFailed ? "Return the order to \(stop.name)" : place(stop)
        var lines = [
            "NEXT  \(title)",
            "      \(stop.address)",
            "      \(eta(card.eta))",
            "      \(task.id) · \(task.status.rawValue) · \(syncText(task))",
        ]
        if let distance = card.distanceMeters { lines.append("      \(metres(distance)) from here") }
        if let arrival = card.arrivalDetected {
            lines.append("      arrival detected (\(Int(arrival.distanceMeters)) m from the stop)\(arrival.mode == .suggest ? ": confirm it" : "")")
        }
        if let action = card.primaryAction { lines.append("  ▶   \(action.rawValue)   (driverctl \(command(for: action)))") }
        lines.append("      navigate: \(card.navigation.geo)")
        if next.remainingStops > 1 { lines.append("      then \(StatusFormatter.plural(next.remainingStops - 1, "more stop"))") }
        return lines.joined(separator: "\n")
    }

    static func metres(_ value: Double) -> String {
        value >= 1000 ? "\(TextFormat.fixed(value / 1000, decimals: 1)) km" : "\(Int(value.rounded())) m"
    }

    /// One visit per line, newest first.
    static func visits(_ list: VisitList) -> String {
        guard !list.visits.isEmpty else { return "No visits yet." }
        return list.visits.map { visit in
            let arrived = GPSFormatter.utc(visit.arrivedAt)
            let stay = visit.dwellSeconds.map { "stayed \(Int($0 / 60)) min \(Int($0) % 60) s" } ?? "still there"
            let distance = visit.arrivalDistanceMeters.map { ", \(Int($0)) m from the stop" } ?? ""
            let unfinished = visit.leftUnfinished ? ", left once unfinished" : ""
            return "\(arrived)  \(visit.stopId.rightPadded(22)) arrived (\(visit.arrivalSource.rawValue)\(distance)), \(stay)\(unfinished) · \(visit.state)"
        }.joined(separator: "\n")
    }

    /// A visit as it changes, for the live view: arrived, left unfinished, left.
    static func visitChange(_ visit: VisitView) -> String {
        if let dwell = visit.dwellSeconds { return "left \(visit.stopId) after \(StatusFormatter.duration(dwell))" }
        if visit.leftUnfinished { return "left \(visit.stopId) unfinished" }
        let distance = visit.arrivalDistanceMeters.map { ", \(Int($0)) m from it" } ?? ""
        return "at \(visit.stopId) since \(GPSFormatter.utc(visit.arrivedAt)) (\(visit.arrivalSource.rawValue)\(distance))"
    }

    /// A finished trip or idle period, for the live view.
    static func tripEnded(_ trip: TripView) -> String {
        let span = StatusFormatter.duration(trip.endedAt - trip.startedAt)
        return trip.kind == .trip ? "trip ended: \(metres(trip.distanceMeters)) in \(span)" : "idled \(span) with the engine on"
    }

    /// One trip or idle period per line, newest first.
    static func trips(_ list: TripList) -> String {
        guard !list.trips.isEmpty else { return "No trips yet." }
        return list.trips.map { trip in
            let span = "\(GPSFormatter.utc(trip.startedAt))  \(StatusFormatter.duration(trip.endedAt - trip.startedAt))".rightPadded(34)
            let what = trip.kind == .trip ? "trip  \(metres(trip.distanceMeters))" : "idle  (engine on, standing)"
            return "\(span) \(what) · \(trip.state)"
        }.joined(separator: "\n")
    }

    static func command(for action: PrimaryAction) -> String {
        switch action {
        case .accept: "accept"
        case .arrivedAtStore, .arrivedAtDestination: "arrive"
        case .pickedUp: "pickup"
        case .capturePOD: "pod otp CODE | pod photo FILE"
        case .delivered: "deliver"
        case .returnToVendor: "return"
        }
    }

    static func syncText(_ task: TaskView) -> String {
        switch task.sync {
        case .synced: "synced"
        case .pending: "not sent yet"
        case .rejected: "refused by the backend (now \(task.backendStatus.rawValue))"
        }
    }

    static func queue(_ route: RouteView) -> String {
        guard !route.stops.isEmpty else { return "No stops left." + (route.syncedAt == nil ? " (not synced with the backend yet)" : "") }
        var lines = route.stops.enumerated().map { index, stop in
            let number = String(index + 1).leftPadded(2)
            return "\(number). \(stop.status.rawValue.rightPadded(10)) \(place(stop)) · \(stop.address)  [\(stop.id)]"
        }
        let pending = route.tasks.filter { $0.sync == .pending }.count
        if pending > 0 { lines.append("\(StatusFormatter.plural(pending, "task")) with changes not sent yet") }
        return lines.joined(separator: "\n")
    }

    static func actionDone(_ task: TaskView) -> String {
        var text = "\(task.id): \(task.status.rawValue) (\(syncText(task)))"
        if let action = task.primaryAction { text += "; next: \(action.rawValue)" }
        return text
    }

    static func proof(_ result: PODResult) -> String {
        let task = result.task
        let state = switch task.pod {
        case .accepted: "accepted by the backend"
        case .unverified: "queued, not verified yet (offline)"
        case .captured: "captured" + (result.bytes.map { ", \($0) bytes, uploading" } ?? "")
        case .rejected: "rejected"
        case .none: "not captured"
        }
        return "\(task.id): proof of delivery \(state); next: \(task.primaryAction?.rawValue ?? "nothing")"
    }

    static func resequence(_ result: ResequenceResult) -> String {
        let lines = result.order.enumerated().map { index, stop in
            "\(String(index + 1).leftPadded(2)). \(stop.stopId.rightPadded(22)) ETA \(Int((stop.etaSeconds / 60).rounded(.up))) min"
        }
        return (lines + [result.applied ? "applied and queued for the backend" : "preview only: add --confirm to apply"]).joined(separator: "\n")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
    func rightPadded(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
