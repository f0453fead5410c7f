import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import Foundation
import JSONRPC
import NMEASynth
import SQLiteKit
import Synchronization
import Testing

/// A driver's shift on a unit whose power is cut at random moments: real gpsd (gpsfake), the reference backend,
/// driverd with its state directory on the power-cut file system. The driver works orders through the socket;
/// the fleet sends configuration documents and asks for diagnostic bundles; the backend goes away and comes back;
/// logins and token refreshes happen. Each cut is a `kill -9` and the loss of every unsynced write (half of them
/// tearing the last one); driverd is then started again as systemd would, with nothing repaired by hand.
///
/// What the unit told the driver is saved is written down here (the ledger), and checked after every restart and
/// at the end against the unit and the backend.
final class PowerCutJourney {
    struct Settings {
        var seed: UInt64
        var cuts: Int
        var tearShare = 0.5
    }

    /// What the run saw, for the test and the soak's report.
    struct Report: CustomStringConvertible {
        var cuts = 0
        var cutsByMoment: [String: Int] = [:]
        var tornCuts = 0
        var restarts = 0
        var acknowledgedTransitions = 0
        var acknowledgedProofs = 0
        var acknowledgedSOS = 0
        var configAnswers = 0
        var bundles = 0
        /// Seconds from the last cut until every bundle was uploaded whole.
        var bundleDrainSeconds = 0.0
        var lostAcknowledged: [String] = []
        var duplicates: [String] = []
        var deadLetters = 0
        /// Each dead letter as the store keeps it (kind, task, body, the backend's answer): why, when there are any.
        var deadLetterAnswers: [String] = []
        var integrityFailures = 0
        var tornFiles: [String] = []
        var pingsRecorded = 0
        var pingsLost = 0
        var pingsLostPerCut: [Int] = []
        /// Lost pings recorded longer before their cut than the promise allows.
        var pingsLostOutsideWindow: [String] = []
        var recognisedReplays = 0
        /// Calls the unit refused or could not answer, by what it said (a call cut by the power among them).
        var unanswered: [String: Int] = [:]

        var description: String {
            let perCut = pingsLostPerCut.sorted()
            let median = perCut.isEmpty ? 0 : perCut[perCut.count / 2]
            return "cuts \(cuts) (\(cutsByMoment.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); torn \(tornCuts)), "
                + "restarts \(restarts); acknowledged: \(acknowledgedTransitions) transitions, \(acknowledgedProofs) proofs, \(acknowledgedSOS) SOS; "
                + "configuration answers \(configAnswers), bundles \(bundles) (the last uploaded \(Int(bundleDrainSeconds)) s into the final drain); lost \(lostAcknowledged.count), duplicated \(duplicates.count), "
                + "dead letters \(deadLetters), integrity failures \(integrityFailures), torn files \(tornFiles.count); "
                + "pings recorded \(pingsRecorded), lost \(pingsLost) (per cut: median \(median), max \(perCut.last ?? 0)); "
                + "replays recognised \(recognisedReplays); unanswered: \(unanswered.sorted { $0.value > $1.value }.prefix(6).map { "\($0.value)× \($0.key)" })"
        }
    }

    /// When in a step the power goes.
    enum Moment: String, CaseIterable {
        case afterReply = "after a reply", midCall = "mid-call", idle = "while idle"
    }

    let settings: Settings
    private var rng: SplitMix64
    private let directory = TemporaryDirectory("powercut")
    private let sim: SimProcess
    private let http: SimHTTP
    private let fake: GPSFake
    private let fs: PowerCutFS
    private let config: String
    private var daemon: DaemonProcess?
    /// Every daemon started, for their logs (the pings each recorded) and the cut that ended each (monotonic).
    private var lives: [(daemon: DaemonProcess, cutAt: Double?)] = []
    private(set) var report = Report()

    // The ledger: what the unit acknowledged.
    private var acknowledged: [String: [TaskStatus]] = [:]
    private var provedTasks: Set<String> = []
    private var sosIds: [String] = []
    private var published = 1
    private var bundlesAsked: [String] = []
    private var taskCount = 0
    private var backendAway = false
    private let photo: String

    static let speedLimit = 30.0

    init(_ settings: Settings) throws {
        self.settings = settings
        rng = SplitMix64(seed: settings.seed)
        sim = try SimProcess(arguments: ["--seed", String(settings.seed), "--token-ttl", "90"])
        http = SimHTTP(base: sim.base)
        let key = try http.requestBlocking(.GET, "/sim/config").decode(RemoteConfigTests.Overview.self).publicKey
        // A drive around a block with stops: moving and parked sampling both, for as long as any run lasts.
        let log = directory.file("drive.nmea")
        try NMEAWriter.log(Self.route(minutes: 40)).write(toFile: log, atomically: true, encoding: .utf8)
        fake = try GPSFake(log: log, delay: 0.5)
        fs = try PowerCutFS(mountpoint: directory.file("state"), seed: Int(settings.seed))
        config = Harness.config(backend: sim) + """
            [daemon]
            log_level = "debug"
            [safety]
            speed_limit = \(Self.speedLimit)
            [ignition]
            path = "\(directory.file("ignition"))"
            [remote]
            public_key = "\(key)"
            healthy_seconds = 5
            [diag]
            chunk_bytes = 1024

            """
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        photo = directory.file("photo.png")
        try png.write(to: URL(fileURLWithPath: photo))
    }

    /// Laps of a block with a stop after each: moving and stationary sampling both.
    static func route(minutes: Int) -> SyntheticRoute {
        let corners: [SyntheticRoute.Point] = [
            .init(lat: 52.52000, lon: 13.40500), .init(lat: 52.52450, lon: 13.40500),
            .init(lat: 52.52450, lon: 13.41240), .init(lat: 52.52000, lon: 13.41240),
        ]
        var legs: [SyntheticRoute.Leg] = []
        // A lap (2 km at 12 m/s) and a stand of 100 s: about 4.6 minutes.
        for _ in 0..<(minutes / 4 + 1) {
            for corner in corners.dropFirst() + [corners[0]] { legs.append(.drive(to: corner, speed: 12)) }
            legs += [.ramp(speed: 0, rate: 2), .stop(seconds: 100), .ramp(speed: 12, rate: 1.5)]
        }
        return SyntheticRoute(start: corners[0], startTime: 1_795_852_800, legs: legs, noise: 1.0, seed: 5)
    }

    // MARK: The run

    func run() throws -> Report {
        defer {
            _ = try? daemon?.stop()
            fs.unmount()
        }
        while report.cuts < settings.cuts {
            try ensureDaemon()
            try step()
        }
        try finish()
        return report
    }

    private func chance(_ p: Double) -> Bool { rng.nextUnit() < p }
    private func pick(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }

    /// One thing the driver, the fleet or the network does, perhaps with the power going. A call may fail (the unit
    /// stopped to apply a configuration, the power went): then the driver was told nothing.
    private func step() throws {
        // About one step in five loses the power, at one of three moments.
        let moment: Moment? = chance(0.2) ? Moment.allCases[pick(0...2)] : nil
        let roll = rng.nextUnit()
        switch roll {
        case ..<0.62:
            guard let action = nextDriverAction() else { return try assignTask() }
            try withCut(moment, action)
        case ..<0.67: try withCut(moment) { self.raiseSOS() }
        case ..<0.71: try withCut(moment) { self.login() }
        case ..<0.725: try withCut(moment) { self.logoutAndBack() }
        case ..<0.775: try toggleBackend(); try withCut(moment) { self.idle() }
        case ..<0.805: try publishConfiguration(); try withCut(moment) { self.idle() }
        case ..<0.83: try askForBundle(); try withCut(moment) { self.idle() }
        // A while on the road: pings pile up in memory, go to the backend, or to the disk when it is away.
        case ..<0.88: try withCut(moment) { usleep(UInt32(self.pick(2000...8000)) * 1000) }
        default: try withCut(moment) { self.idle() }
        }
    }

    private func idle() { usleep(UInt32(pick(50...600)) * 1000) }

    /// Runs `body`, cutting the power at `moment`.
    private func withCut(_ moment: Moment?, _ body: () -> Void) throws {
        guard let moment, let daemon else { return body() }
        switch moment {
        case .afterReply:
            body()
            try cut(moment)
        case .midCall, .idle:
            // The power goes from another thread while the call (or the pause) is under way.
            let delay = UInt32(moment == .midCall ? pick(0...15) : pick(0...3000)) * 1000
            let pid = daemon.pid
            let killedAt = KillTime()
            let killer = Thread {
                usleep(delay)
                killedAt.time.withLock { $0 = Self.monotonic() }
                kill(pid, SIGKILL)
            }
            killer.start()
            body()
            while !killer.isFinished { usleep(1000) }
            try cut(moment, killedAt: killedAt.time.withLock { $0 })
        }
    }

    /// When the killer thread killed the daemon: the life's end, for the pings' window. (Taken after the step's body
    /// instead, which may sleep up to 8 s past the kill, it made pings recorded within their window look up to 8 s
    /// older: the "late pings" of seeds 2718 and 4242.)
    private final class KillTime: Sendable {
        let time = Mutex<Double?>(nil)
    }

    private func cut(_ moment: Moment, killedAt: Double? = nil) throws {
        guard let daemon else { return }
        let at = killedAt ?? Self.monotonic()
        kill(daemon.pid, SIGKILL)
        daemon.process.waitUntilExit()
        let tear = chance(settings.tearShare)
        let cut = try fs.cut(tear: tear)
        if cut.torn != nil { report.tornCuts += 1 }
        lives[lives.count - 1].cutAt = at
        self.daemon = nil
        report.cuts += 1
        report.cutsByMoment[moment.rawValue, default: 0] += 1
        try fs.mount()
    }

    /// driverd again, as systemd starts it after a cut or after it stopped to apply a configuration (exit 75).
    private func ensureDaemon() throws {
        if let daemon, daemon.process.isRunning { return }
        if let daemon {
            daemon.process.waitUntilExit()
            // A crash: its report from the thread that crashed (the backtracer prints it first), else the log's end.
            let log = daemon.log
            let crash = log.range(of: "crashed").map { String(log[$0.lowerBound...].prefix(6000)) } ?? String(log.suffix(3000))
            #expect(daemon.process.terminationStatus == 75, "driverd exited by itself with \(daemon.process.terminationStatus):\n\(crash)")
        }
        // Half the lives parked with the engine off (where most cuts happen: the driver turns the key), half driving:
        // the safety gate closes while the speed is unknown after a start with the engine on.
        try (chance(0.5) ? "0\n" : "1\n").write(toFile: directory.file("ignition"), atomically: true, encoding: .utf8)
        // A crash prints every thread's stack (the SIGSEGV in the WebSocket client's setup, seen twice in 6,000 cuts,
        // showed only the crashed thread and the main one).
        let started = try DaemonProcess(
            arguments: ["--gpsd", fake.endpoint], environment: ["SWIFT_BACKTRACE": "enable=yes,threads=all"], config: config,
            waitForSocket: false, directory: directory)
        do {
            try started.waitUntilListening()
        } catch where !started.process.isRunning && started.process.terminationStatus == 75 {
            // A configuration document that came in before the socket was probed: systemd starts it again.
        }
        daemon = started
        lives.append((started, nil))
        report.restarts += 1
        try checkAfterRestart(started)
    }

    private func client(timeout: Duration = .seconds(20)) throws -> RPCClient { try #require(daemon).client(timeout: timeout) }

    // MARK: What the driver does

    /// The call for the next action on the first open task; nil when no task is open (a new order is due).
    private func nextDriverAction() -> (() -> Void)? {
        guard let route = try? client().call(Methods.routeGet, NoParams()),
              let task = route.tasks.first(where: { !$0.status.isTerminal })
        else { return nil }
        let params = TaskParams(taskId: task.id, outsideReason: .gpsPoor)
        let transition: (() throws -> TaskView)?
        switch task.status {
        case .assigned: transition = { try self.client().call(Methods.taskAccept, params) }
        case .accepted: transition = { try self.client().call(Methods.taskArrive, params) }
        case .arrivedAtStore: transition = { try self.client().call(Methods.taskPickup, params) }
        case .pickedUp:
            transition = task.pod == .none && chance(0.5) ? nil : { try self.client().call(Methods.taskArrive, params) }
        case .arrivedAtDestination:
            if task.pod == .none || task.pod == .rejected {
                transition = nil
            } else if chance(0.15) {
                transition = { try self.client().call(Methods.taskFail, FailParams(taskId: task.id, reason: .customerUnavailable, outsideReason: .gpsPoor)) }
            } else {
                transition = { try self.client().call(Methods.taskDeliver, params) }
            }
        case .deliveryFailed: transition = { try self.client().call(Methods.taskReturnToVendor, params) }
        case .delivered, .returnedToVendor, .cancelled: return nil
        }
        guard let transition else { return { self.proveDelivery(task) } }
        return {
            guard let reply = self.answer({ try transition() }) else { return }
            self.acknowledged[reply.id, default: []].append(reply.status)
            self.report.acknowledgedTransitions += 1
        }
    }

    /// A call's answer, or nil (counted by what went wrong).
    private func answer<T>(_ call: () throws -> T) -> T? {
        do {
            return try call()
        } catch {
            let text = "\(error)"
            report.unanswered[String(text.prefix(80)), default: 0] += 1
            return nil
        }
    }

    private func proveDelivery(_ task: TaskView) {
        let reply: PODResult?
        if task.podType == PODType.otp.rawValue {
            reply = answer { try self.client().call(Methods.podOTP, OTPParams(taskId: task.id, otp: "4812")) }
        } else {
            reply = answer { try self.client().call(Methods.podPhoto, PhotoParams(taskId: task.id, path: self.photo)) }
        }
        if reply != nil {
            provedTasks.insert(task.id)
            report.acknowledgedProofs += 1
        }
    }

    /// A new order, its stops on the block the van drives (arrivals happen there now and then).
    private func assignTask() throws {
        taskCount += 1
        let id = "pc-\(settings.seed)-\(taskCount)"
        let pickup = Scenario.Place(address: "Depot \(taskCount)", lat: 52.52000, lng: 13.40500, name: "Depot", phone: "+49 30 1")
        let dropoff = Scenario.Place(address: "Corner \(taskCount)", lat: 52.52450, lng: 13.41240, name: "C. Customer", phone: "+49 30 2")
        let task = Scenario.Task(
            id: id, driverId: "drv-1", pickup: pickup, dropoff: dropoff, podType: taskCount % 2 == 0 ? .photo : .otp,
            otp: taskCount % 2 == 0 ? nil : "4812")
        let reply = try http.requestBlocking(.POST, "/sim/tasks", json: task)
        #expect(reply.status == 200 || reply.status == 201, "assigning \(id): \(reply.status)")
        // The unit hears of it by a push, or at its next sync.
        try waitUntil("the order \(id) on the unit", timeout: .seconds(90), detail: unitDetail()) {
            try ensureDaemon()
            if backendAway { try setBackend(away: false) }
            loginIfAsked()
            return (try? client().call(Methods.routeGet, NoParams()))?.tasks.contains { $0.id == id } ?? false
        }
    }

    private func raiseSOS() {
        if let view = try? client().call(Methods.sosRaise, SOSParams(note: "power-cut test")) {
            sosIds.append(view.sosId)
            report.acknowledgedSOS += 1
        }
    }

    /// Logout wipes the store's free pages (a VACUUM and a checkpoint): the power may go in the middle.
    private func logoutAndBack() {
        _ = try? client().call(Methods.authLogout, NoParams())
        login()
    }

    /// A driver logs in again when the unit says so (after a logout the power cut before the login).
    private func loginIfAsked() {
        if (try? client().call(Methods.outboxStatus, NoParams()))?.link == .authRequired { login() }
    }

    private func login() {
        _ = try? client().call(Methods.authLogin, LoginParams(username: "rider1", password: "demo-password"))
    }

    // MARK: What the fleet and the network do

    private func toggleBackend() throws { try setBackend(away: !backendAway) }

    private func setBackend(away: Bool) throws {
        if away {
            _ = try http.requestBlocking(.PUT, "/sim/faults", json: FaultPlan(dropBeforeRate: 1))
            _ = try http.requestBlocking(.POST, "/sim/websockets/close")
        } else {
            _ = try http.requestBlocking(.DELETE, "/sim/faults")
        }
        backendAway = away
    }

    private func publishConfiguration() throws {
        published += 1
        let radius = 100 + published % 50
        _ = try http.requestBlocking(
            .PUT, "/sim/config", json: RemoteConfigTests.Publication(version: published, settings: ["arrival.radius": .integer(radius)]))
    }

    private func askForBundle() throws {
        let id = "pc-diag-\(settings.seed)-\(bundlesAsked.count + 1)"
        bundlesAsked.append(id)
        _ = try http.requestBlocking(.PUT, "/sim/requests?driverId=drv-1", json: FleetRequest(requestId: id, kind: .diagnosticBundle, windowSeconds: 600))
    }

    // MARK: Checks

    /// Right after a restart, before the backend can restore anything: the unit holds what it acknowledged.
    private func checkAfterRestart(_ daemon: DaemonProcess) throws {
        // A unit that stops at once (a configuration document taken during the last life) is checked at its next start.
        guard let route = try? daemon.client(timeout: .seconds(20)).call(Methods.routeGet, NoParams()) else {
            #expect(stopsSoon(daemon), "driverd runs but does not answer:\n\(daemon.log.suffix(3000))")
            return
        }
        for task in route.tasks {
            guard let told = acknowledged[task.id]?.last else { continue }
            let kept = task.status == told || TaskWorkflow.precedes(told, task.status) || task.status == .cancelled
            if !kept { report.lostAcknowledged.append("\(task.id): told \(told.rawValue), the unit has \(task.status.rawValue) after cut \(report.cuts)") }
            if provedTasks.contains(task.id), !task.status.isTerminal, task.pod == .none {
                report.lostAcknowledged.append("\(task.id): proof acknowledged, the unit has none after cut \(report.cuts)")
            }
        }
        // A token file is the old one or the new one, whole.
        if let data = FileManager.default.contents(atPath: fs.mountpoint + "/tokens.json"),
           (try? JSONSerialization.jsonObject(with: data)) == nil {
            report.tornFiles.append("tokens.json after cut \(report.cuts): \(data.count) bytes that are not JSON")
        }
        if try !integrityOK() { report.integrityFailures += 1 }
    }

    /// Whether a daemon that did not answer is stopping (to apply a configuration: exit 75); stopping takes a moment.
    private func stopsSoon(_ daemon: DaemonProcess) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while daemon.process.isRunning && ContinuousClock.now < deadline { usleep(50_000) }
        return !daemon.process.isRunning
    }

    private func deadLetterAnswers() throws -> [String] {
        let db = try Database(path: fs.mountpoint + "/driverd.sqlite", readOnly: true)
        return try db.values(String.self, sql: """
            SELECT kind || ' ' || task_id || ' key ' || idempotency_key || ' (' || attempts || ' attempts, ' || CAST(payload AS TEXT)
                || '): ' || COALESCE(backend_answer, '?') FROM outbox_item WHERE state = 'dead' ORDER BY id
            """)
    }

    private func integrityOK() throws -> Bool {
        let db = try Database(path: fs.mountpoint + "/driverd.sqlite", readOnly: true)
        return try db.value(String.self, sql: "PRAGMA integrity_check") == "ok"
    }

    /// The backend back, the queue drained: everything acknowledged reached it once, in order; no dead letter.
    private func finish() throws {
        try ensureDaemon()
        try setBackend(away: false)
        // Settled: the backend has the unit's answer to the last document and the unit runs without a trial. (Not on
        // trial alone: the last document, published while the backend was away, may come after that, and the unit
        // then stops to apply it in the middle of the drain below.)
        try waitUntil("the configuration settled", timeout: .seconds(120), detail: unitDetail()) {
            try ensureDaemon()
            loginIfAsked()
            let live = try #require(self.daemon)
            if published > 1 {
                let answers = try http.requestBlocking(.GET, "/sim/config").decode(RemoteConfigTests.Overview.self).acks
                guard answers.contains(where: { $0.ack.version == published }) else { return false }
            }
            do {
                return try !live.client().call(Methods.configShow, NoParams()).remote.onTrial
            } catch where stopsSoon(live) {
                return false  // it stops to apply the configuration the trial ended with; ensureDaemon starts it again
            }
        }
        let drainStarted = ContinuousClock.now
        defer { report.bundleDrainSeconds = Double((ContinuousClock.now - drainStarted).components.seconds) }
        try waitUntil("every requested bundle uploaded", timeout: .seconds(180), detail: bundleDetail()) {
            try ensureDaemon()
            loginIfAsked()
            let uploads = try http.requestBlocking(.GET, "/sim/requests").decode(FleetOverview.self).uploads
            _ = try? client(timeout: .seconds(60)).call(Methods.outboxFlush, NoParams())
            return bundlesAsked.allSatisfy { id in uploads.contains { $0.requestId == id && $0.complete } }
        }
        // The drive ends (no new pings), then everything goes.
        fake.kill()
        loginIfAsked()
        let status = try Harness.drain(try #require(self.daemon), timeout: .seconds(180))
        report.deadLetters = status.deadLetters
        if status.deadLetters > 0 { report.deadLetterAnswers = try deadLetterAnswers() }
        if try !integrityOK() { report.integrityFailures += 1 }
        let live = try #require(self.daemon)
        try live.stop()
        self.daemon = nil

        let stats = try http.requestBlocking(.GET, "/sim/stats").decode(SimStats.self)
        for (task, told) in acknowledged {
            let applied = stats.statusUpdates.filter { $0.taskId == task }.map(\.status)
            if Set(applied).count != applied.count { report.duplicates.append("\(task): \(applied.map(\.rawValue))") }
            for status in told where !applied.contains(status) {
                report.lostAcknowledged.append("\(task): \(status.rawValue) acknowledged, never at the backend (it has \(applied.map(\.rawValue)))")
            }
        }
        for task in provedTasks where !stats.pods.contains(where: { $0.taskId == task && $0.accepted }) {
            report.lostAcknowledged.append("\(task): proof acknowledged, never accepted by the backend")
        }
        let activity = try http.requestBlocking(.GET, "/sim/activity").decode(ActivityList.self)
        for id in sosIds {
            let copies = activity.sos.filter { $0.report.sosId == id }.count
            if copies != 1 { report.lostAcknowledged.append("SOS \(id): \(copies) copies at the backend") }
        }
        let visits = try http.requestBlocking(.GET, "/sim/visits").decode([VisitReceipt].self)
        let visitKeys = visits.map(\.idempotencyKey)
        if Set(visitKeys).count != visitKeys.count { report.duplicates.append("visits: \(visitKeys.count - Set(visitKeys).count) duplicated") }
        let answers = try http.requestBlocking(.GET, "/sim/config").decode(RemoteConfigTests.Overview.self).acks.map(\.ack)
        report.configAnswers = answers.count
        for version in Set(answers.map(\.version)) where answers.filter({ $0.version == version }).count > 1 {
            report.duplicates.append("configuration v\(version) answered \(answers.filter { $0.version == version }.count) times")
        }
        report.bundles = bundlesAsked.count
        report.recognisedReplays = lives.reduce(0) { $0 + $1.daemon.log.components(separatedBy: "taken as acknowledged").count - 1 }
        try countPings()
    }

    /// The unit's queue and link, and its log's end, for a failure's message.
    private func unitDetail() -> String {
        let outbox = (try? client(timeout: .seconds(5)).call(Methods.outboxStatus, NoParams())).map { "\($0)" } ?? "no answer"
        return "outbox: \(outbox)\n" + (daemon?.log.suffix(4000).description ?? "")
    }

    private func bundleDetail() -> String {
        let overview = try? http.requestBlocking(.GET, "/sim/requests").decode(FleetOverview.self)
        let incomplete = bundlesAsked.map { id -> String in
            guard let upload = overview?.uploads.first(where: { $0.requestId == id }) else { return "\(id): nothing uploaded" }
            return upload.complete ? "" : "\(id): \(upload.received) of \(upload.count) chunks\(upload.checksumMismatch ? ", checksum mismatch" : "")"
        }.filter { !$0.isEmpty }
        let answers = overview.map { Dictionary($0.acks.map { ($0.ack.requestId, $0.ack.status.rawValue) }, uniquingKeysWith: { $0 + "," + $1 }) } ?? [:]
        let queue = (try? client(timeout: .seconds(10)).call(Methods.outboxStatus, NoParams())).map { "\($0)" } ?? "?"
        // The fleet's pushes as each life took them, and whatever names a request not done.
        let missing = incomplete.map { String($0.prefix { $0 != ":" }) }
        let fleetLines = lives.flatMap {
            $0.daemon.log.split(separator: "\n").filter { line in
                line.contains("FLEET_REQUEST") || line.contains("out of order") || missing.contains { line.contains($0) }
                    || ((line.contains("fleet") || line.contains("bundle")) && !line.contains(": DONE"))
            }
        }
        return "\(bundlesAsked.count) asked; incomplete: \(incomplete.prefix(20)) (\(incomplete.count)); their answers: "
            + "\(incomplete.prefix(20).map { answers[String($0.prefix { $0 != ":" })] ?? "none" })\nqueue: \(queue)\n" + fleetLines.suffix(40).joined(separator: "\n")
    }

    /// Every ping a daemon recorded that the backend never got is lost; each must have been recorded within the
    /// commit window before the cut that ended its daemon.
    private func countPings() throws {
        let received = try http.requestBlocking(.GET, "/sim/drivers/drv-1/locations").decode(DriverLocations.self)
        let outcome = PingAccounting.account(lives.map { PingAccounting.Life(log: $0.daemon.log, endedAt: $0.cutAt) }, received: received)
        report.pingsRecorded = outcome.recorded
        report.pingsLost = outcome.lost
        report.pingsLostPerCut = outcome.lostPerEnd
        report.pingsLostOutsideWindow = outcome.outsideWindow
    }

    static func monotonic() -> Double { PingAccounting.monotonic() }
}
