import BackendClient
import BackendContract
import DriverAPI
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging

/// `sos.raise`: a driver's call for help. Stored durably (synchronous=FULL) before the answer, first in the
/// outbox's line (priority urgent), repeated until the backend acks it; its ack is announced as `sos.changed`.
/// Never behind the safety gate or a shift: help is asked for while driving and off shift too.
struct SOSDesk: MethodOwner, Sendable {
    let outbox: Outbox
    /// nil without a backend: an SOS would reach nobody.
    let session: BackendSession?
    let tracker: Tracker
    let clock: DaemonClock
    let hub: EventHub
    let logger: Logger

    /// A fix older than this is no position to send help to.
    static let maxFixAge: Double = 300

    func register(in router: inout RPCRouter) {
        router.register(Methods.sosRaise) { [self] params, _ in try raise(params) }
    }

    func raise(_ params: SOSParams) throws -> SOSView {
        let note = params.note?.trimmingWhitespace()
        if let note, note.count > SOSParams.maxNoteLength {
            throw APIError(.invalidParams, "note: at most \(SOSParams.maxNoteLength) characters (\(note.count) given)")
        }
        guard session != nil else {
            throw APIError(.unavailable, "no backend is configured (backend.url): an SOS would reach nobody; call for help by phone")
        }
        let stamp = clock.now()
        let fix = tracker.currentPosition(maxAge: Self.maxFixAge).fix
        let id = RandomID.uuid()
        let report = SOSReport(
            sosId: id, raisedAt: stamp.time, timeSource: stamp.source,
            location: fix.map { Location(lat: $0.latitude, lng: $0.longitude, accuracy: $0.horizontalError) }, fixTime: fix?.time,
            gps: tracker.link.rawValue, note: note?.isEmpty == false ? note : nil)
        do {
            // Someone may be in danger: a disk that refuses it (full, read-only, failing) does not stop it. It goes from
            // memory and is written as soon as the disk takes it.
            let (_, saved) = try outbox.enqueueKeepingInMemory(OutboxItemRecord(
                kind: .sos, taskId: TaskRecord.sosLane, idempotencyKey: id, payload: try Data(Codec.encode(report)), createdAt: stamp.time))
            if !saved {
                logger.error("the SOS could not be stored (storage \(outbox.store.health.status.condition.rawValue)): it is sent from memory; a restart before the backend has it would lose it")
            }
        } catch {
            logger.error("cannot store an SOS: \(Store.describeWriteFailure(error))")
            let refusal = outbox.store.health.refusal("the SOS", error)
            throw APIError(refusal.kind, "\(refusal.message): call for help by phone", data: refusal.data)
        }
        let view = Self.view(report, state: .raised)
        logger.warning(
            "SOS raised", metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.sosRaised.rawValue)", "sos": "\(id)", "gps": "\(report.gps)"])
        hub.publish(Events.sosChanged, view)
        return view
    }

    /// What front ends are told about a stored SOS report.
    static func view(_ report: SOSReport, state: SOSState, acknowledgedAt: Double? = nil) -> SOSView {
        let position = report.location.map { location in
            SOSPosition(
                lat: location.lat, lng: location.lng, accuracy: location.accuracy, fixTime: report.fixTime ?? report.raisedAt,
                ageSeconds: max(0, report.raisedAt - (report.fixTime ?? report.raisedAt)))
        }
        return SOSView(
            sosId: report.sosId, state: state, raisedAt: report.raisedAt, timeSource: report.timeSource, position: position,
            gps: GPSLinkState(rawValue: report.gps) ?? .lost, note: report.note, acknowledgedAt: acknowledgedAt)
    }
}

/// The SOS desk owns the SOS lane: it sends each call for help and tells front ends when the backend has it.
/// (A refusal never ends an SOS: `OutboxOutcomePolicy` has it tried again.)
extension SOSDesk {
    func attach(to uplink: Uplink) {
        uplink.register(.sos, .posting(to: BackendPaths.sos, acknowledged: { [self] item, _ in acknowledged(item) }))
    }

    private func acknowledged(_ item: OutboxItemRecord) {
        guard let report = logger.valueOrLog("reading the acknowledged SOS", { try Codec.decode(SOSReport.self, from: item.payload) }) else { return }
        hub.publish(Events.sosChanged, Self.view(report, state: .acknowledged, acknowledgedAt: clock.now().time))
        logger.notice("the backend acknowledged the SOS", metadata: ["sos": "\(report.sosId)"])
    }
}
