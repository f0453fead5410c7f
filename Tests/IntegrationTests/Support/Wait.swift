import Foundation

/// Polls `condition` until it holds, failing with `what` (and `detail`, read at the end) after `timeout`.
func waitUntil(
    _ what: String, timeout: Duration = .seconds(60), detail: @autoclosure () -> String = "", _ condition: () throws -> Bool
) throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return }
        usleep(100_000)
    }
    if try condition() { return }
    throw TestFailure("\(what): not within \(timeout)\n\(detail())")
}

/// `waitUntil` for conditions that ask over the network.
func waitUntil(
    _ what: String, timeout: Duration = .seconds(60), detail: @autoclosure () -> String = "", _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(100))
    }
    if try await condition() { return }
    throw TestFailure("\(what): not within \(timeout)\n\(detail())")
}
