import DriverAPI
import DriverDomain
import Testing

@Suite("Route rules")
struct RouteRulesTests {
    static func parse(_ id: String) -> (taskId: String, kind: StopKind)? {
        for kind in StopKind.allCases where id.hasSuffix("-" + kind.rawValue) { return (String(id.dropLast(kind.rawValue.count + 1)), kind) }
        return nil
    }

    static let sequence = ["a-pickup", "b-pickup", "a-dropoff", "b-dropoff"]

    @Test("open stops follow the tasks: picked up leaves the store, a failure reopens it, terminal tasks leave the route")
    func openStops() {
        func open(_ a: TaskStatus, _ b: TaskStatus?) -> [String] {
            RouteRules.openStops(sequence: Self.sequence, fallback: [], parse: Self.parse) { ["a": a, "b": b][$0] ?? nil }
        }
        #expect(open(.accepted, .accepted) == Self.sequence)
        #expect(open(.pickedUp, .arrivedAtStore) == ["b-pickup", "a-dropoff", "b-dropoff"])
        #expect(open(.deliveryFailed, .pickedUp) == ["a-pickup", "b-dropoff"])
        #expect(open(.delivered, .cancelled) == [])
        #expect(open(.returnedToVendor, nil) == [])
        // A task the stored order does not know yet comes after it.
        let withNew = RouteRules.openStops(sequence: ["a-pickup", "a-dropoff"], fallback: ["c-pickup", "c-dropoff", "a-pickup"], parse: Self.parse) { _ in .assigned }
        #expect(withNew == ["a-pickup", "a-dropoff", "c-pickup", "c-dropoff"])
    }

    @Test("the next stop is the first open stop, and the fallback is made only when the sequence has none open")
    func firstOpenStop() {
        let statuses: [[String: TaskStatus]] = [
            ["a": .accepted, "b": .accepted], ["a": .pickedUp, "b": .arrivedAtStore], ["a": .deliveryFailed, "b": .pickedUp],
            ["a": .delivered, "b": .cancelled], ["a": .delivered, "b": .delivered, "c": .accepted], [:],
        ]
        let fallback = ["c-pickup", "c-dropoff", "a-pickup"]
        for status in statuses {
            var fallbackMade = false
            let first = RouteRules.firstOpenStop(sequence: Self.sequence, fallback: { fallbackMade = true; return fallback }, parse: Self.parse) { status[$0] }
            let all = RouteRules.openStops(sequence: Self.sequence, fallback: fallback, parse: Self.parse) { status[$0] }
            #expect(first == all.first, "\(status)")
            let sequenceHasOpen = RouteRules.openStops(sequence: Self.sequence, fallback: [], parse: Self.parse) { status[$0] }.isEmpty == false
            #expect(fallbackMade == !sequenceHasOpen, "\(status)")
        }
    }

    @Test("every stop status: pending, en-route for the next stop, arrived, picked-up, delivered, failed")
    func stopStatuses() {
        let expected: [(StopKind, TaskStatus, Bool, StopStatus)] = [
            (.pickup, .assigned, false, .pending), (.pickup, .assigned, true, .pending), (.pickup, .accepted, true, .enRoute), (.pickup, .arrivedAtStore, true, .arrived),
            (.pickup, .pickedUp, false, .pickedUp), (.pickup, .delivered, false, .pickedUp), (.pickup, .deliveryFailed, true, .enRoute),
            (.pickup, .returnedToVendor, false, .failed), (.pickup, .cancelled, false, .failed),
            (.dropoff, .accepted, false, .pending), (.dropoff, .pickedUp, true, .enRoute), (.dropoff, .pickedUp, false, .pending),
            (.dropoff, .arrivedAtDestination, true, .arrived), (.dropoff, .delivered, false, .delivered),
            (.dropoff, .deliveryFailed, false, .failed), (.dropoff, .cancelled, false, .failed),
        ]
        for (kind, status, isNext, stop) in expected {
            #expect(RouteRules.stopStatus(kind, task: status, isNext: isNext) == stop, "\(kind) \(status) next=\(isNext)")
        }
    }

    @Test("a new order holds every open stop once, each pickup before its drop-off")
    func sequenceRule() {
        #expect(RouteRules.sequenceProblem(["b-pickup", "a-pickup", "b-dropoff", "a-dropoff"], current: Self.sequence, parse: Self.parse) == nil)
        #expect(RouteRules.sequenceProblem(["a-dropoff", "a-pickup", "b-pickup", "b-dropoff"], current: Self.sequence, parse: Self.parse)
            == "a-dropoff comes before a-pickup")
        #expect(RouteRules.sequenceProblem(["a-pickup", "b-pickup", "a-dropoff"], current: Self.sequence, parse: Self.parse)?
            .hasPrefix("the order must hold each active stop once") == true)
        #expect(RouteRules.sequenceProblem(["a-pickup", "a-pickup", "a-dropoff", "b-dropoff"], current: Self.sequence, parse: Self.parse) != nil)
    }
}

@Suite("Task sync merge")
struct TaskSyncTests {
    let pending = [TaskSync.Pending(itemId: 1, to: .arrivedAtStore), TaskSync.Pending(itemId: 2, to: .pickedUp)]

    @Test("nothing queued: the backend's status, unless it is older than the last answer")
    func nothingQueued() {
        #expect(TaskSync.merge(backend: .accepted, confirmed: .assigned, pending: []) == .backend(.accepted))
        #expect(TaskSync.merge(backend: .cancelled, confirmed: .pickedUp, pending: []) == .backend(.cancelled))
        #expect(TaskSync.merge(backend: .accepted, confirmed: .pickedUp, pending: []) == .keepLocal(.pickedUp))
    }

    @Test("the backend anywhere before the queue's end: the local status stays and the rest is replayed")
    func alongTheChain() {
        for backend in [TaskStatus.assigned, .accepted, .arrivedAtStore, .pickedUp] {
            #expect(TaskSync.merge(backend: backend, confirmed: .accepted, pending: pending) == .keepLocal(.pickedUp), "\(backend)")
        }
    }

    @Test("an ack that was not recorded (the backend ahead of the confirmed status) still fits")
    func unrecordedAck() {
        #expect(TaskSync.merge(backend: .arrivedAtStore, confirmed: .assigned, pending: [.init(itemId: 3, to: .pickedUp)]) == .keepLocal(.pickedUp))
    }

    @Test("a cancelled task or one moved to another branch: a conflict, the backend's state, every queued item dead")
    func conflicts() {
        #expect(TaskSync.merge(backend: .cancelled, confirmed: .accepted, pending: pending)
            == .conflict(local: .pickedUp, backend: .cancelled, deadItems: [1, 2]))
        #expect(TaskSync.merge(backend: .deliveryFailed, confirmed: .arrivedAtDestination, pending: [.init(itemId: 4, to: .delivered)])
            == .conflict(local: .delivered, backend: .deliveryFailed, deadItems: [4]))
        #expect(TaskSync.merge(backend: .returnedToVendor, confirmed: .arrivedAtDestination, pending: [.init(itemId: 5, to: .delivered)])
            == .conflict(local: .delivered, backend: .returnedToVendor, deadItems: [5]))
    }

    @Test("the backend past the whole queue (changes the unit sent before a power cut lost their record): its status, nothing dead")
    func backendAhead() {
        #expect(TaskSync.merge(backend: .delivered, confirmed: .accepted, pending: pending) == .backend(.delivered))
        #expect(TaskSync.merge(backend: .arrivedAtStore, confirmed: .assigned, pending: [.init(itemId: 6, to: .accepted)]) == .backend(.arrivedAtStore))
    }

    @Test("already applied: the same status, or one only reachable after it; never another branch or a cancellation")
    func alreadyApplied() {
        let table: [(target: TaskStatus, backend: TaskStatus, applied: Bool)] = [
            (.accepted, .accepted, true), (.accepted, .arrivedAtStore, true), (.accepted, .delivered, true),
            (.deliveryFailed, .returnedToVendor, true), (.pickedUp, .accepted, false), (.delivered, .arrivedAtDestination, false),
            (.delivered, .deliveryFailed, false), (.deliveryFailed, .delivered, false), (.accepted, .cancelled, false),
        ]
        for row in table {
            #expect(TaskSync.alreadyApplied(target: row.target, backend: row.backend) == row.applied, "\(row)")
        }
    }

    @Test("precedes: forward along driver actions only")
    func precedes() {
        #expect(TaskWorkflow.precedes(.assigned, .delivered))
        #expect(TaskWorkflow.precedes(.arrivedAtDestination, .returnedToVendor))
        #expect(!TaskWorkflow.precedes(.delivered, .pickedUp))
        #expect(!TaskWorkflow.precedes(.deliveryFailed, .delivered))
        #expect(!TaskWorkflow.precedes(.accepted, .cancelled))
        #expect(!TaskWorkflow.precedes(.pickedUp, .pickedUp))
    }
}

@Suite("Local ETA and navigation links")
struct LocalETATests {
    let regensburg = LocalETA.Point(lat: 49.0189, lng: 12.0927)
    let customer = LocalETA.Point(lat: 49.0160, lng: 12.1005)

    @Test("without a path: the straight line × 1.3 over the recent speed, with a floor and a default")
    func straightLine() {
        let straight = LocalETA.distance(regensburg, customer)
        #expect(abs(straight - 651) < 5, "\(straight)")
        let metres = LocalETA.remainingDistance(from: regensburg, to: customer, along: [])
        #expect(abs(metres - straight * 1.3) < 0.001)
        #expect(LocalETA.seconds(distance: 1000, recentSpeed: 10) == 100)
        #expect(LocalETA.seconds(distance: 900, recentSpeed: 0.5) == 300)
        #expect(abs(LocalETA.seconds(distance: 830, recentSpeed: nil) - 100) < 1e-9)
    }

    @Test("along a path: from the nearest vertex to the end")
    func alongPath() {
        let path = [regensburg, LocalETA.Point(lat: 49.0189, lng: 12.1005), customer]
        let position = LocalETA.Point(lat: 49.0189, lng: 12.1000)
        let expected = LocalETA.distance(position, path[1]) + LocalETA.distance(path[1], path[2])
        #expect(abs(LocalETA.remainingDistance(from: position, to: customer, along: path) - expected) < 0.001)
    }

    @Test("recent speed counts moving samples of the last five minutes only")
    func recentSpeed() {
        var speed = RecentSpeed()
        #expect(speed.average == nil)
        speed.observe(time: 0, speed: 10)
        speed.observe(time: 10, speed: 0.2)  // waiting at a light: not counted
        speed.observe(time: 20, speed: 14)
        #expect(speed.average == 12)
        speed.observe(time: 400, speed: 6)
        #expect(speed.average == 6)
    }

    @Test("links for Google Maps, Apple Maps, Waze and geo: (RFC 5870)")
    func links() {
        let links = NavigationLinks.to(lat: 49.016, lng: 12.1005)
        #expect(links.google == "google.navigation:q=49.016,12.1005")
        #expect(links.googleWeb == "https://www.google.com/maps/dir/?api=1&destination=49.016,12.1005")
        #expect(links.apple == "maps://?daddr=49.016,12.1005")
        #expect(links.waze == "waze://?ll=49.016,12.1005&navigate=yes")
        #expect(links.geo == "geo:49.016,12.1005")
        #expect(NavigationLinks.to(lat: -33.8688197, lng: 151.2092955).geo == "geo:-33.86882,151.209296")
    }
}
