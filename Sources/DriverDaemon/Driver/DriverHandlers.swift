import DriverAPI
import DriverStore
import JSONRPC
import Logging

/// `shift.*`, `events.ack`, `events.pending`, `auth.logout` and `sos.raise`.
enum DriverHandlers {
    static func register(
        in router: inout RPCRouter, shift: Shift, pushes: PushCenter, workflow: Workflow, recorder: PingRecorder?,
        uplink: Uplink?, travel: TravelMonitor, sos: SOSDesk, logger: Logger
    ) {
        // Every answer carries what the shift drove.
        @Sendable func withTravel(_ status: ShiftStatus) -> ShiftStatus {
            var status = status
            status.travel = travel.shiftTravel
            return status
        }
        router.register(Methods.shiftStatus) { _, _ in withTravel(shift.status) }
        router.register(Methods.shiftStart) { _, _ in
            let (status, changed) = try change(shift, on: true)
            if changed {
                if let startedAt = status.startedAt { travel.shiftStarted(at: startedAt) }
                logger.info("shift started")
                await pushes.deliverHeld()
            }
            return withTravel(status)
        }
        router.register(Methods.shiftEnd) { _, _ in
            // From now on nothing is recorded; what the shift recorded goes out in a last flush.
            let (status, changed) = try change(shift, on: false)
            guard changed else { return withTravel(status) }
            recorder?.flush()
            await uplink?.flushShiftEnd()
            logger.info("shift ended")
            return withTravel(status)
        }
        router.register(Methods.eventsAck) { params, _ in try await pushes.acknowledge(params.id) }
        router.register(Methods.eventsPending) { _, _ in try await pushes.summary() }
        router.register(Methods.authLogout) { _, _ in try await workflow.logout() }
        router.register(Methods.sosRaise) { params, _ in try sos.raise(params) }
    }

    private static func change(_ shift: Shift, on: Bool) throws -> (ShiftStatus, Bool) {
        do {
            return try shift.set(on: on, now: shift.now())
        } catch {
            throw APIError(.internalError, "the shift change was not stored: \(error)")
        }
    }
}
