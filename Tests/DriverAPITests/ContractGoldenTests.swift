import DriverAPI
import Foundation
import JSONRPC
import Testing

/// The wire shape of every API type, pinned by golden files: a change here is a change of the contract.
@Suite("API contract golden JSON")
struct ContractGoldenTests {
    static func golden(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Golden"))
        var data = try Data(contentsOf: url)
        while data.last == UInt8(ascii: "\n") { data.removeLast() }
        return data
    }

    static func check<T: Codable & Equatable>(_ value: T, _ name: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // DRIVERD_RECORD_GOLDEN=1 writes a missing file into the source tree, to be reviewed and committed.
        if ProcessInfo.processInfo.environment["DRIVERD_RECORD_GOLDEN"] == "1" {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name).json")
            if !FileManager.default.fileExists(atPath: url.path) { try (try encoder.encode(value) + Data("\n".utf8)).write(to: url) }
        }
        let expected = try golden(name)
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        // What the daemon writes on the socket (`Codec`) is the same text.
        #expect(String(decoding: try Codec.encode(value), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(try JSONDecoder().decode(T.self, from: expected) == value)
    }

    @Test func describeResult() throws {
        try Self.check(AgentDescription(apiMajor: 1, apiMinor: 0, daemonVersion: "0.1.0"), "agent.describe.result")
    }

    static let fix = Fix(
        time: 1795852800.5, latitude: 49.0189, longitude: 12.0927, altitude: 350, speed: 8.25, track: 87.5,
        climb: 0, horizontalError: 4, verticalError: 6, mode: 3, satellitesUsed: 9)

    static let gps = GPSStatus(
        gpsd: "127.0.0.1:2947", link: .connected, tracking: true, fixesSeen: 1200, pingsRecorded: 130,
        pingsByMotion: ["moving": 10, "stationary": 120], pingsPending: 2, lastFix: fix, lastFixAge: 0.5,
        motion: .stationary, lastError: nil)

    static let sampling = SamplingStatus(
        samplingHz: 1, policyHz: 0.1, batteryMode: .normal, watch: .continuous, ignition: nil,
        requests: [RateRequest(connection: 7, pid: 4242, uid: 1000, hz: 1)])

    @Test func statusResult() throws {
        let status = AgentStatus(
            daemonVersion: "0.1.0", apiMajor: 1, apiMinor: 2, uptimeSeconds: 12.5,
            rpc: RPCSection(socketPath: "/run/driverd/driverd.sock", socketActivated: true, openConnections: 3, requestsServed: 42),
            gps: Self.gps, sampling: Self.sampling,
            outbox: SectionAvailability(available: true), link: SectionAvailability(available: true),
            shift: .notInThisBuild("shift tracking"), uplink: Self.outbox)
        try Self.check(status, "agent.status.result")
    }

    static let outbox = OutboxStatus(
        enabled: true, backend: "https://fleet.example.com", link: .online, transport: .https, transitions: 1, proofs: 0,
        pings: 12, deadLetters: 0, oldestPendingAgeSeconds: 4.5, lastSuccess: 1795852800.5, lastError: nil,
        retryInSeconds: nil, driverId: "drv-1")

    @Test func outboxAndAuth() throws {
        try Self.check(Self.outbox, "outbox.status.result")
        try Self.check(LoginParams(username: "rider1", password: "demo-password"), "auth.login.params")
        try Self.check(LoginResult(driverId: "drv-1", expiresAt: 1795856400), "auth.login.result")
    }

    @Test func gpsMethods() throws {
        try Self.check(Self.gps, "gps.status.result")
        try Self.check(Self.fix, "gps.fix.result")
        try Self.check(RequestRateParams(hz: 1), "gps.requestRate.params")
        try Self.check(RequestRateResult(requestedHz: 1, effectiveHz: 1), "gps.requestRate.result")
        try Self.check(SubscribeParams(topics: ["gps.fix"]), "events.subscribe.params")
        try Self.check(SubscribeResult(topics: ["gps.fix"]), "events.subscribe.result")
    }

    static let stop = StopView(
        id: "task-1001-dropoff", taskId: "task-1001", kind: .dropoff, status: .enRoute, address: "Dachauplatz 4, Regensburg",
        name: "A. Customer", phone: "+49 151 0000001", lat: 49.016, lng: 12.1005)

    static let task = TaskView(
        id: "task-1001", status: .pickedUp, backendStatus: .arrivedAtStore, sync: .pending, podType: "OTP", pod: .none,
        failureReason: nil, allowedActions: [.arrive], primaryAction: .arrivedAtDestination, stops: [stop], updatedAt: 1795852800.5)

    @Test func workflowMethods() throws {
        let links = NavigationLinks(
            google: "google.navigation:q=49.016,12.1005", googleWeb: "https://www.google.com/maps/dir/?api=1&destination=49.016,12.1005",
            apple: "maps://?daddr=49.016,12.1005", waze: "waze://?ll=49.016,12.1005&navigate=yes", geo: "geo:49.016,12.1005")
        let card = NextStopCard(
            stop: Self.stop, task: Self.task, eta: ETAView(seconds: 240, distanceMeters: 1900, source: "local", computedAt: 1795852800.5),
            primaryAction: .arrivedAtDestination, navigation: links)
        try Self.check(RouteNext(next: card, remainingStops: 2), "route.next.result")
        try Self.check(RouteView(stops: [Self.stop], tasks: [Self.task], syncedAt: 1795852790), "route.get.result")
        try Self.check(
            RouteUpdate(route: RouteView(stops: [Self.stop], tasks: [Self.task], syncedAt: 1795852790), next: RouteNext(next: card, remainingStops: 2)),
            "route.updated.event")
        try Self.check(TaskParams(taskId: "task-1001"), "task.accept.params")
        try Self.check(Self.task, "task.accept.result")
        try Self.check(FailParams(taskId: "task-1001", reason: .customerUnavailable, note: "rang twice"), "task.fail.params")
        try Self.check(OTPParams(taskId: "task-1001", otp: "4812"), "pod.otp.params")
        try Self.check(PhotoParams(taskId: "task-1002", path: "/home/driver/handover.jpg"), "pod.photo.params")
        try Self.check(PODResult(task: Self.task, sha256: String(repeating: "ab", count: 32), bytes: 614404), "pod.photo.result")
        try Self.check(ResequenceParams(order: ["task-1002-dropoff", "task-1001-dropoff"], confirm: true), "route.resequence.params")
        try Self.check(
            ResequenceResult(order: [.init(stopId: "task-1002-dropoff", etaSeconds: 180), .init(stopId: "task-1001-dropoff", etaSeconds: 420)], applied: true),
            "route.resequence.result")
        try Self.check(NavResult(stop: Self.stop, links: links), "nav.links.result")
        try Self.check(PODProgressEvent(taskId: "task-1002", sentBytes: 65536, totalBytes: 614900), "pod.progress.event")
        try Self.check(PODVerdictEvent(taskId: "task-1001", type: "OTP", accepted: false, message: "wrong code"), "pod.verdict.event")
        try Self.check(
            TaskConflictEvent(taskId: "task-1002", localStatus: .arrivedAtDestination, backendStatus: .cancelled, reason: "HTTP 409 INVALID_TRANSITION"),
            "task.conflict.event")
    }

    @Test("arrivals, visits and completions away from the stop (API 1.7)")
    func arrivals() throws {
        let detected = ArrivalDetected(
            taskId: "task-1001", stopId: "task-1001-dropoff", distanceMeters: 18, dwellSeconds: 20, detectedAt: 1795852800.5, mode: .suggest)
        try Self.check(detected, "arrival.suggested.event")
        try Self.check(TaskParams(taskId: "task-1001", outsideReason: .customerMetElsewhere), "task.deliver.params")
        try Self.check(
            VisitList(visits: [VisitView(
                id: "9c1d", taskId: "task-1001", stopId: "task-1001-pickup", arrivedAt: 1795852800, arrivalSource: .geofence,
                arrivalDistanceMeters: 12, departedAt: 1795852890, dwellSeconds: 90, leftUnfinished: false, state: "sent")]),
            "visits.list.result")
        let links = NavigationLinks(
            google: "google.navigation:q=49.016,12.1005", googleWeb: "https://www.google.com/maps/dir/?api=1&destination=49.016,12.1005",
            apple: "maps://?daddr=49.016,12.1005", waze: "waze://?ll=49.016,12.1005&navigate=yes", geo: "geo:49.016,12.1005")
        let card = NextStopCard(
            stop: Self.stop, task: Self.task, eta: nil, primaryAction: .arrivedAtDestination, navigation: links, distanceMeters: 18,
            arrivalDetected: detected)
        try Self.check(RouteNext(next: card, remainingStops: 1), "route.next.arrival.result")
        try Self.check(
            TripList(trips: [
                TripView(id: "7e2a", kind: .trip, startedAt: 1795852800, endedAt: 1795853400, distanceMeters: 5230, state: "sent"),
                TripView(id: "7e2b", kind: .idle, startedAt: 1795853460, endedAt: 1795853900, distanceMeters: 0, state: "queued"),
            ]), "trips.list.result")
        try Self.check(
            ShiftStatus(
                onShift: false, startedAt: 1795852000, endedAt: 1795881000,
                travel: ShiftTravel(odometerMeters: 12840, bridgedMeters: 310, trips: 4, tripInProgress: false, idleSeconds: 420, harshEvents: 1)),
            "shift.end.result")
    }

    @Test("sos.raise and sos.changed (API 1.8)")
    func sos() throws {
        try Self.check(SOSParams(note: "van hit, driver hurt"), "sos.raise.params")
        let raised = SOSView(
            sosId: "8e908d2f-cc35-4178-825b-ebc6dbde594c", state: .raised, raisedAt: 1795852800.25, timeSource: .gps,
            position: SOSPosition(lat: 49.0134, lng: 12.1016, accuracy: 4.2, fixTime: 1795852799, ageSeconds: 1.25), gps: .connected,
            note: "van hit, driver hurt")
        try Self.check(raised, "sos.raise.result")
        var acknowledged = raised
        acknowledged.state = .acknowledged
        acknowledged.acknowledgedAt = 1795852800.5
        try Self.check(acknowledged, "sos.changed.event")
        var status = Self.outbox
        status.sos = 1
        try Self.check(status, "outbox.status.sos.result")
    }

    @Test("safety.changed, and the gate's reason in agent.status (API 1.9)")
    func safetyChanged() throws {
        try Self.check(
            SafetyStatus(state: .moving, speed: 12.1, limit: 4.47, heldPushes: 1, open: false,
                         reason: "pull over to complete: the vehicle is moving (12.1 m/s)"),
            "safety.changed.event")
    }

    @Test("vehicle.status and vehicle.changed (API 1.11)")
    func vehicleStatus() throws {
        let status = VehicleStatus(
            adapter: "/dev/ttyUSB0", link: .ok, engineRunning: true, ignition: true, ignitionSource: .obd, speed: 15, speedAge: 0.4, rpm: 1800,
            fuelPercent: 61.6, odometerKm: 123456.7, engineRunSeconds: 900, voltage: 14.1, checkEngine: true,
            faults: [
                VehicleFault(code: "P0301", pending: false, description: "Cylinder 1 misfire detected"),
                VehicleFault(code: "P1234", pending: true),
            ],
            supportedPIDs: ["01", "0C", "0D", "1F", "2F", "A6"], odometerDisagreements: 1)
        try Self.check(status, "vehicle.status.result")
        try Self.check(
            VehicleStatus(adapter: "192.168.0.10:35000", link: .noVehicle, detail: "UNABLE TO CONNECT", engineRunning: false, ignition: false,
                          ignitionSource: .obd, voltage: 11.6, batteryProtectionSince: 1795852800),
            "vehicle.changed.event")
    }

    @Test("update.status (API 1.13)")
    func updateStatus() throws {
        try Self.check(
            UpdateStatus(
                mode: .auto, package: "driverd", installedVersion: "0.1.0",
                release: ReleaseProgress(
                    package: "driverd", version: "0.2.0", size: 9_437_184, downloadedBytes: 262_144, state: .paused,
                    waitingFor: "an SOS, a status or a proof waits to be sent"),
                window: "off shift, or parked with the ignition off for 30 min, or between 2:00 and 5:00", bytesToday: 262_144,
                maxBytesPerDay: 52_428_800,
                lastOutcome: UpdateOutcome(package: "driverd", version: "0.1.9", status: .rolledBack, reason: "crash at start", at: 1795852800)),
            "update.status.result")
    }

    @Test("shift.changed (API 1.12)")
    func shiftChanged() throws {
        try Self.check(ShiftStatus(onShift: true, startedAt: 1795852000, endedAt: nil), "shift.changed.event")
    }

    @Test("events.pending and push.summary carry the ids of what waits (API 1.9)")
    func pushSummary() throws {
        try Self.check(PushSummary(pending: 2, held: 1, summary: "1 new order, 1 message", ids: [17, 18]), "events.pending.result")
    }

    @Test("config.show (API 1.8)")
    func configShow() throws {
        try Self.check(
            ConfigShowResult(
                entries: [
                    ConfigEntry(key: "arrival.radius", value: "150.0", source: "remote v2"),
                    ConfigEntry(key: "backend.password", value: "\"<redacted>\"", source: "file"),
                    ConfigEntry(key: "gps.gpsd", value: "\"127.0.0.1:2947\"", source: "default"),
                ],
                remote: RemoteConfigStatus(enabled: true, running: 2, onTrial: false)),
            "config.show.result")
    }

    @Test func diagReport() throws {
        let status = AgentStatus(
            daemonVersion: "0.1.0", apiMajor: 1, apiMinor: 5, uptimeSeconds: 3600,
            rpc: RPCSection(socketPath: "/run/driverd/driverd.sock", socketActivated: true, openConnections: 1, requestsServed: 9),
            gps: Self.gps, sampling: Self.sampling,
            outbox: SectionAvailability(available: true), link: SectionAvailability(available: true),
            shift: SectionAvailability(available: true), uplink: Self.outbox,
            shiftStatus: ShiftStatus(onShift: true, startedAt: 1795850000, endedAt: nil),
            safety: SafetyStatus(state: .stationary, speed: 0, limit: 4.47, heldPushes: 0))
        let report = DiagReport(
            generatedAt: 1795852800.5,
            versions: DiagVersions(
                daemon: "0.1.0", api: "1.5", sqlite: "3.40.1", libgps: "11.0", kernel: "Linux 6.1.0 x86_64",
                os: "Debian GNU/Linux 12 (bookworm)"),
            status: status,
            storage: StorageStatus(stateDirectory: "/var/lib/driverd", databaseBytes: 81920, freeBytes: 1 << 30, totalBytes: 8 << 30),
            config: DiagConfig(
                path: "/etc/driverd/driverd.toml",
                effective: ["backend.password": "\"<redacted>\"", "backend.url": "\"https://fleet.example.com\""],
                warnings: ["sampling.movinghz: unknown key, ignored (did you mean sampling.moving_hz?)"],
                fileText: "[backend]\npassword = \"<redacted>\"\n"),
            warnings: [LogRecord(
                time: 1795852790, level: "warning", subsystem: "uplink",
                messageID: "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f7b", message: "login required")],
            warningsTotal: 3)
        try Self.check(report, "diag.report.result")
    }

    @Test func setLogLevel() throws {
        try Self.check(SetLogLevelParams(level: .debug), "agent.setLogLevel.params")
        try Self.check(SetLogLevelResult(previous: .info, current: .debug), "agent.setLogLevel.result")
    }

    @Test("every error code is in docs/API.md's table with its text, and the table has no other")
    func errorCodes() throws {
        // Rows of the "## Errors" table: | `-32700` | parse error | ... |
        let section = try Self.apiDoc().components(separatedBy: "\n## Errors")[1].components(separatedBy: "\n## ")[0]
        var documented: [Int: String] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, let code = Int(cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))) else { continue }
            documented[code] = cells[1]
        }
        let declared = Dictionary(uniqueKeysWithValues: APIError.Kind.all.map { ($0.wireCode, $0.description) })
        #expect(declared == documented)
        for kind in APIError.Kind.all { #expect(APIError.Kind(wireCode: kind.wireCode) == kind) }
        #expect(APIError.Kind(wireCode: 4242).wireCode == 4242)
        #expect(APIError.Kind(wireCode: 4242).description == "error 4242")
        #expect(APIError.Kind(wireCode: 4242) != .unavailable)
    }

    @Test("docs/API.md's Notifications list every topic, and no other")
    func topicsDocumented() throws {
        let section = try Self.apiDoc().components(separatedBy: "\n## Notifications\n")[1].components(separatedBy: "\n## ")[0]
        // Bullets of the notifications list: - `gps.fix`: ...
        let documented = section.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("- `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: 3)..<end])
        }
        #expect(Set(documented) == Set(Events.topics))
        #expect(documented.count == Events.topics.count, "a topic documented twice")
    }

    static func apiDoc() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/API.md"), encoding: .utf8)
    }

}
