import DriverStore
import BackendClient
import BackendContract
import Logging

/// The backend's WebSocket (batches up, pushes down) and, while it is down, push polling.
extension Uplink {
    /// Keeps the WebSocket open while the link is usable: reconnects with the uplink's decorrelated backoff (a step down
    /// after each connection that opened, as the sender's after a success; reset once one has stayed up `stableAfter`),
    /// not before the start's spread, not while the backend asked for quiet, and not at all while credentials are refused.
    func runWebSocket() async {
        guard let webSocket else { return }
        let (backoff, stableAfter, spreadWindow, firstAttemptAt) = state.withLock {
            ($0.machine.configuration.backoff, $0.machine.configuration.stableAfter, $0.machine.configuration.spreadWindow, $0.machine.firstAttemptAt)
        }
        if firstAttemptAt > now { await webSocketWakeup.wait(until: firstAttemptAt) }
        var backoffWait: Double?
        while !Task.isCancelled, !isStopping {
            if state.withLock({ $0.machine.link == .authRequired }) {
                await webSocketWakeup.wait(until: now + 5)
                continue
            }
            // The backend asked for quiet (a Retry-After on a request or on the upgrade): the socket does not knock either.
            if let quietUntil = state.withLock({ $0.machine.backendQuietUntil }), quietUntil > now {
                await webSocketWakeup.wait(until: quietUntil)
                continue
            }
            // The backend is away (the sender got no answer): its attempts find out when it is back; the socket does not
            // knock besides.
            if let awayUntil = state.withLock({ $0.backendAwayUntil }), awayUntil > now {
                await webSocketWakeup.wait(until: awayUntil)
                continue
            }
            let opened = now, openedBefore = webSocket.openedConnections
            let generation = state.withLock { $0.identityGeneration }
            do {
                // Through the session's `authorized`: a "not now" heard while fetching the token quiets the sender too.
                let token = try await session.authorized { _, token in token }
                logger.debug("WebSocket connecting", metadata: ["url": "\(webSocket.url)"])
                try await webSocket.run(token: token, lastPushId: pushes.lastId) { [self] push in await received(push) }
            } catch let error as BackendClientError where error.retryAfter != nil {
                // The upgrade's own "not now" is heard as a request's is (the sender waits too), and the socket
                // comes back when the sender may: after the backend's wait and the sender's share of the fleet's
                // window, not at the wait's end with every other unit told the same.
                logger.info("WebSocket upgrade refused: \(error)")
                heardNotNow(error, identityGeneration: generation)
                if case .backingOff(let until) = state.withLock({ $0.machine.link }) { await webSocketWakeup.wait(until: until) }
                continue
            } catch {
                logger.debug("WebSocket unavailable", metadata: ["error": "\(error)"])
            }
            let connected = webSocket.openedConnections > openedBefore
            if connected { pushes.socketClosed(now: now) }
            // A connection that lasted a while was fine: start the backoff again. One that opened and was lost soon (a lossy
            // link) takes it a step down, so loss at the edge of coverage does not keep the socket away for minutes.
            if now - opened >= stableAfter {
                backoffWait = nil
            } else if connected {
                backoffWait = backoff.stepDown(from: backoffWait)
            }
            let wait = backoff.next(after: backoffWait, random: Double.random(in: 0..<1))
            backoffWait = wait
            // In a fleet, a connection that failed without a Retry-After comes back spread over the fleet's window too,
            // not in a second or two with the rest of the fleet's sockets.
            await webSocketWakeup.wait(until: now + max(wait, spreadWindow * Double.random(in: 0..<1)))
        }
    }

    /// A push from the backend: remembered by id, so none is handed on twice.
    func received(_ push: Push) async {
        await pushTurns.run { await handle(push) }
    }

    private func handle(_ push: Push, gapsFilled: Bool = false) async {
        let driver: String?
        switch pushes.accept(push, gapsFilled: gapsFilled) {
        case .seen:
            return
        case .afterGap(let lastId):
            // Some came out of order or not at all: those between are fetched and go first, so none is passed over
            // (the newest id seen is where a reconnect's catch-up starts). Unreachable now: the next poll brings them.
            let missed: [Push]
            do {
                missed = try await client.pushes(after: lastId, token: try await session.validToken()).pushes
            } catch {
                logger.info("pushes that came out of order not fetched (the next poll brings them): \(error)")
                pushes.fellBehind()
                return
            }
            logger.info("pushes fetched that came out of order", metadata: ["after": "\(lastId)", "before": "\(push.id)"])
            for earlier in missed where earlier.id < push.id { await handle(earlier, gapsFilled: true) }
            return await handle(push, gapsFilled: true)
        case .taken(let taken):
            driver = taken
        }
        // An ETA comes every half minute while a stop is ahead: not worth a journal line each.
        logger.log(
            level: push.kind == .eta ? .debug : .info, "push from the backend", metadata: ["kind": "\(push.kind.rawValue)", "id": "\(push.id)"])
        for subscription in state.withLock({ $0.subscriptions }) where subscription.pushes.contains(push.kind) { await subscription.pushed(push) }
        // Stopping in the middle of it (a fleet request's bundle cut short): the push comes again next time.
        guard !Task.isCancelled else { return }
        do {
            try pushes.handled(push, driver: driver)
        } catch {
            // The push is handled again after a restart (its owners take a repeat as one).
            logger.error("cannot store the push cursor at \(push.id): \(Store.describeWriteFailure(error))")
        }
    }

    /// Without the WebSocket, or behind it, pushes are polled (at most every 30 s).
    func pollPushes(token: String) async throws {
        guard let after = pushes.pollDue(now: now, socketOpen: webSocket?.isConnected ?? false) else { return }
        for push in try await client.pushes(after: after, token: token).pushes { await received(push) }
        pushes.caughtUp()
    }
}
