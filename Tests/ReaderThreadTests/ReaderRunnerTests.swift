#if canImport(Glibc)
import Glibc
#endif
import ReaderThread
import Synchronization
import Testing

@Suite("Reader thread")
struct ReaderRunnerTests {
    @Test("ended() returns only after the thread's body has returned, so whatever it did last is done")
    func endedWaitsForTheBody() async throws {
        let runner = ReaderRunner()
        let log = Mutex<[String]>([])
        let released = Mutex(false)
        runner.start(named: "test-reader") {
            // A pass under way when the stop comes: it finishes, however long it takes, before the thread ends.
            while !runner.isStopping { runner.wakePipe.wait(seconds: 1) }
            while !released.withLock({ $0 }) { usleep(10_000) }
            log.withLock { $0.append("last pass done") }
        }
        runner.stop()
        let waiting = Task {
            await runner.ended()
            log.withLock { $0.append("ended") }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(log.withLock { $0 }.isEmpty, "ended() returned while the body still ran")
        released.withLock { $0 = true }
        await waiting.value
        #expect(log.withLock { $0 } == ["last pass done", "ended"])
        // Again, after the end: at once.
        await runner.ended()
    }

    @Test("ended() returns at once for a runner never started")
    func neverStarted() async {
        await ReaderRunner().ended()
    }
}
