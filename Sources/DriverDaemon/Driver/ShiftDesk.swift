import DriverAPI
import DriverStore
import JSONRPC
import Logging

/// The `shift.*` methods' owner: the shift's state (`Shift`) and what a change of it sets going: the held pushes
/// delivered at a start, the last flush of what the shift recorded at its end, the shift's travel in each answer.
struct ShiftDesk: MethodOwner, Sendable {
    let shift: Shift
    let pushes: PushCenter
    let recorder: PingRecorder?
    let flush: OutboxFlush?
    let travel: TravelMonitor
    let logger: Logger

    func register(in router: inout RPCRouter) {
        router.register(Methods.shiftStatus) { [self] _, _ in withTravel(shift.status) }
        router.register(Methods.shiftStart) { [self] _, _ in
            let (status, changed) = try change(on: true)
            if changed {
                if let startedAt = status.startedAt { travel.shiftStarted(at: startedAt) }
                logger.info("shift started")
                await pushes.deliverHeld()
            }
            return withTravel(status)
        }
        router.register(Methods.shiftEnd) { [self] _, _ in
            // From now on nothing is recorded; what the shift recorded goes out in a last flush.
            let (status, changed) = try change(on: false)
            guard changed else { return withTravel(status) }
            recorder?.flush()
            await flush?.shiftEnd()
            logger.info("shift ended")
            return withTravel(status)
        }
    }

    /// Every answer carries what the shift drove.
    private func withTravel(_ status: ShiftStatus) -> ShiftStatus {
        var status = status
        status.travel = travel.shiftTravel
        return status
    }

    private func change(on: Bool) throws -> (ShiftStatus, Bool) {
        do {
            return try shift.set(on: on, now: shift.now())
        } catch {
            throw APIError(.internalError, "the shift change was not stored: \(error)")
        }
    }
}
