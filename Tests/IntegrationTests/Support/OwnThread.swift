import Foundation
import Testing

/// Runs each test of a suite on a thread of its own, a few tests at a time.
///
/// Why: these tests block (child processes, `usleep` polls, `waitUntilExit`), and Swift Testing runs test bodies on
/// the cooperative pool, one thread per core. On a 2-core machine two blocked tests stalled every other test, so
/// the suites, though independent, ran two at a time (a 0.2 s test "took" 156 s). With a task executor preference
/// the body and its child tasks run on a dedicated thread; a slot limit (`DRIVERD_TEST_PARALLEL`, default 8) keeps
/// the daemons, simulators and gpsfakes of concurrent tests from starving each other of CPU.
struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await TestSlots.shared.acquire()
        let executor = ThreadExecutor(name: String(test.name.prefix(15)))
        defer {
            executor.stop()
            Task { await TestSlots.shared.release() }
        }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test on a thread of its own (see `OwnThreadTrait`).
    static var ownThread: Self { OwnThreadTrait() }
}

/// At most `DRIVERD_TEST_PARALLEL` tests at once; waiters wait in order, without holding a thread.
actor TestSlots {
    static let shared = TestSlots(limit: ProcessInfo.processInfo.environment["DRIVERD_TEST_PARALLEL"].flatMap { Int($0) } ?? 8)

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { free = max(1, limit) }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

/// A task executor that runs its jobs on one thread, in order.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if stopped {
            condition.unlock()
            // A job after the test ended (none is expected: unstructured tasks do not inherit the preference).
            let executor = self.asUnownedTaskExecutor()
            Thread { job.runSynchronously(on: executor) }.start()
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// The thread ends once its queue is empty.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll()
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
