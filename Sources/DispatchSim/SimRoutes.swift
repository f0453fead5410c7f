import BackendContract
import DispatchSimCore
import DriverDomain
import Hummingbird
import NIOCore

/// The dispatcher and test API under /sim/ (no auth, never faulted): assign, cancel, change routes, send
/// messages, read what was received, inject faults.
struct SimRoutes {
    let state: SimState
    let faults: FaultInjector
    let admission: AdmissionControl
    let hub: WebSocketHub
    let photos: PhotoStore

    /// A task as the backend holds it, with what the driver's API does not show.
    struct TaskView: Codable, Sendable {
        var driverId: String
        var task: RiderTask
        var otpAttemptsLeft: Int
        var photo: PhotoProof?
    }

    struct RouteChange: Codable, Sendable {
        var dropoff: Scenario.Place?
        var waypoints: [Scenario.Waypoint]?
    }

    struct Message: Codable, Sendable {
        var driverId: String
        var taskId: String?
        var text: String
    }

    struct FaultStatus: Codable, Sendable {
        var plan: FaultPlan
        var refusingForSeconds: Double
    }

    struct Refuse: Codable, Sendable { var seconds: Double }
    struct Outage: Codable, Sendable { var seconds: Double }

    /// `GET /sim/admission`: the limits, the outage left, the busiest second, and the counts of each second.
    struct AdmissionStatus: Codable, Sendable {
        var limits: AdmissionLimits
        var outageForSeconds: Double
        var peakConnectionAttempts: Int
        var peakRequests: Int
        var seconds: [AdmissionSecond]
    }

    static func admissionStatus(_ desk: AdmissionDesk) -> AdmissionStatus {
        let peak = desk.peak
        return AdmissionStatus(
            limits: desk.limits, outageForSeconds: max(0, (desk.outageUntil ?? 0) - SimState.now()),
            peakConnectionAttempts: peak.connectionAttempts, peakRequests: peak.requests, seconds: desk.seconds)
    }
    struct Revoke: Codable, Sendable { var driverId: String? }
    struct Count: Codable, Sendable { var count: Int }

    func add(to router: Router<SimContext>) {
        let sim = router.group("/sim")
        sim.get("stats") { _, _ -> Response in
            var stats = await state.read { world, _ in world.stats }
            (stats.requests, stats.requestBytes, stats.faultsInjected) = faults.counts
            stats.requestsByRoute = faults.requestsByRoute
            (stats.webSocketFrames, stats.webSocketBytes) = faults.frameCounts
            stats.webSockets = hub.count
            return try SimJSON.response(stats)
        }
        sim.get("visits") { _, _ -> Response in try SimJSON.response(await state.read { world, _ in world.visits }) }
        sim.get("activity") { _, _ -> Response in try SimJSON.response(await state.read { world, _ in world.activity }) }
        sim.get("drivers/:driverId/locations") { _, context -> Response in
            let driverId = try context.parameters.require("driverId")
            return try SimJSON.response(await state.read { world, _ in world.locations(driverId: driverId) })
        }
        sim.get("tasks") { _, _ -> Response in
            try SimJSON.response(await state.read { world, _ in
                world.tasks.values.sorted { $0.task.id < $1.task.id }.map { view($0, world) }
            })
        }
        sim.get("tasks/:taskId") { _, context -> Response in
            let taskId = try context.parameters.require("taskId")
            guard let task = await state.read({ world, _ in world.tasks[taskId].map { view($0, world) } }) else {
                throw SimHTTPError(.notFound, "no task \(taskId)")
            }
            return try SimJSON.response(task)
        }
        sim.post("tasks") { request, _ -> Response in
            let task = try await SimJSON.decode(Scenario.Task.self, from: request)
            return try SimJSON.response(try await state.change { world, now in try world.assign(task, now: now).get() }, status: .created)
        }
        sim.post("tasks/:taskId/cancel") { _, context -> Response in
            let taskId = try context.parameters.require("taskId")
            return try SimJSON.response(try await state.change { world, now in try world.cancel(taskId: taskId, now: now).get() })
        }
        sim.post("tasks/:taskId/route") { request, context -> Response in
            let taskId = try context.parameters.require("taskId")
            let change = try await SimJSON.decode(RouteChange.self, from: request)
            return try SimJSON.response(try await state.change { world, now in
                try world.changeRoute(taskId: taskId, dropoff: change.dropoff, waypoints: change.waypoints, now: now).get()
            })
        }
        sim.post("drivers/:driverId/sequence") { request, context -> Response in
            let driverId = try context.parameters.require("driverId")
            let body = try await SimJSON.decode(RouteSequence.self, from: request)
            let push = try await state.change { world, now in
                _ = try world.resequence(driverId: driverId, to: body.sequence, byDispatcher: true, now: now).get()
                return world.lastPush(driverId: driverId)
            }
            return try SimJSON.response(push)
        }
        sim.post("messages") { request, _ -> Response in
            let message = try await SimJSON.decode(Message.self, from: request)
            return try SimJSON.response(try await state.change { world, now in
                try world.message(driverId: message.driverId, taskId: message.taskId, text: message.text, now: now).get()
            }, status: .created)
        }
        sim.get("faults") { _, _ -> Response in
            try SimJSON.response(FaultStatus(plan: faults.plan, refusingForSeconds: faults.refusingFor(now: SimState.now())))
        }
        sim.put("faults") { request, _ -> Response in
            let plan = try await SimJSON.decode(FaultPlan.self, from: request)
            let problems = plan.problems()
            guard problems.isEmpty else { throw SimHTTPError(.badRequest, problems.joined(separator: "; ")) }
            faults.plan = plan
            return try SimJSON.response(FaultStatus(plan: plan, refusingForSeconds: faults.refusingFor(now: SimState.now())))
        }
        sim.delete("faults") { _, _ -> Response in
            faults.plan = .none
            faults.refuse(forSeconds: 0, now: SimState.now())
            return try SimJSON.response(FaultStatus(plan: .none, refusingForSeconds: 0))
        }
        sim.post("faults/refuse") { request, _ -> Response in
            let refuse = try await SimJSON.decode(Refuse.self, from: request)
            guard (0...3600).contains(refuse.seconds) else { throw SimHTTPError(.badRequest, "seconds must be between 0 and 3600") }
            faults.refuse(forSeconds: refuse.seconds, now: SimState.now())
            return try SimJSON.response(FaultStatus(plan: faults.plan, refusingForSeconds: refuse.seconds))
        }
        sim.get("admission") { _, _ -> Response in try SimJSON.response(Self.admissionStatus(admission.desk)) }
        sim.put("admission") { request, _ -> Response in
            let limits = try await SimJSON.decode(AdmissionLimits.self, from: request)
            let problems = limits.problems()
            guard problems.isEmpty else { throw SimHTTPError(.badRequest, problems.joined(separator: "; ")) }
            admission.set(limits)
            return try SimJSON.response(Self.admissionStatus(admission.desk))
        }
        sim.post("admission/outage") { request, _ -> Response in
            let outage = try await SimJSON.decode(Outage.self, from: request)
            guard (0...86_400).contains(outage.seconds) else { throw SimHTTPError(.badRequest, "seconds must be between 0 and 86400") }
            admission.outage(forSeconds: outage.seconds)
            return try SimJSON.response(Self.admissionStatus(admission.desk))
        }
        sim.get("config") { _, _ -> Response in
            try SimJSON.response(await state.read { world, _ in
                ConfigOverview(publicKey: ConfigSigner.publicKey, documents: world.configDocuments, acks: world.configAcks)
            })
        }
        sim.put("config") { request, _ -> Response in
            let publication = try await SimJSON.decode(ConfigPublication.self, from: request)
            let signed = try ConfigSigner.sign(
                RemoteConfigDocument(version: publication.version, issuedAt: SimState.now(), settings: publication.settings),
                with: publication.signing ?? .fleet)
            try await state.change { world, now in try world.publishConfig(signed, driverId: publication.driverId ?? "drv-1", now: now) }
            return try SimJSON.response(signed)
        }
        sim.get("requests") { _, _ -> Response in try SimJSON.response(await state.read { world, _ in world.fleetOverview }) }
        sim.put("requests") { request, _ -> Response in
            let fleetRequest = try await SimJSON.decode(FleetRequest.self, from: request)
            let driverId = request.uri.queryParameters.get("driverId") ?? "drv-1"
            try await state.change { world, now in try world.sendRequest(fleetRequest, driverId: driverId, now: now) }
            return try SimJSON.response(fleetRequest)
        }
        sim.get("diagnostics/:requestId") { _, context -> Response in
            let requestId = try context.parameters.require("requestId")
            guard let upload = await state.read({ world, _ in world.bundle(requestId: requestId) }), upload.complete else {
                throw SimHTTPError(.notFound, "no complete bundle for \(requestId)")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/gzip"], body: .init(byteBuffer: ByteBuffer(bytes: upload.bytes)))
        }
        sim.post("websockets/close") { _, _ -> Response in
            try SimJSON.response(Count(count: hub.closeAll()))
        }
        sim.post("tokens/revoke") { request, _ -> Response in
            let revoke = try await SimJSON.decode(Revoke.self, from: request)
            try await state.change { world, _ in
                if let driverId = revoke.driverId, world.driver(id: driverId) == nil { throw SimHTTPError(.notFound, "no driver \(driverId)") }
                world.revokeTokens(driverId: revoke.driverId)
            }
            return Response(status: .noContent)
        }
        sim.get("photos/:sha256") { _, context -> Response in
            let sha256 = try context.parameters.require("sha256")
            guard let bytes = photos.load(sha256: sha256) else { throw SimHTTPError(.notFound, "no photo \(sha256)") }
            return Response(
                status: .ok, headers: [.contentType: ImageKind(sniffing: bytes)?.mediaType ?? "application/octet-stream"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    private func view(_ record: SimWorld.TaskRecord, _ world: SimWorld) -> TaskView {
        TaskView(driverId: record.task.driverId, task: world.riderTask(record), otpAttemptsLeft: record.otpAttemptsLeft, photo: record.photo)
    }
}

extension SimRefusal: HTTPResponseError {
    public var status: HTTPResponse.Status { .init(code: code.httpStatus) }
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try SimHTTPError(self).response(from: request, context: context)
    }
}
