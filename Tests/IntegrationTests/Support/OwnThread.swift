import Foundation
import Testing

/// Runs each test of a suite on a thread of its own, a few tests at a time.
///
/// Why: these tests block (child processes, `usleep` polls, `waitUntilExit`), and Swift Testing runs test bodies on
/// the cooperative pool, one thread per core. On a 2-core machine two blocked tests stalled every other test, so
/// the suites, though independent, ran two at a time (a 0.2 s test "took" 156 s). With a task executor preference
/// the body and its child tasks run on a dedicated thread; a slot limit (`DRIVERD_TEST_PARALLEL`, default 8) keeps
/// the daemons, simulators and gpsfakes of concurrent tests from starving each other of CPU. Tests tagged `.long`
/// (a minute or more of real time: replayed drives, the power-cut journey) get their slots first, `.longest` (two
/// minutes or more) before them, so the suite ends soon after its longest test instead of starting one last.
struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await TestSlots.shared.acquire(TestSlots.Length(test))
        let started = ContinuousClock.now
        let executor = ThreadExecutor(name: String(test.name.prefix(15)))
        defer {
            executor.stop()
            TestTimings.record(test: test, took: ContinuousClock.now - started, startedAt: started - TestTimings.runStarted)
            Task { await TestSlots.shared.release() }
        }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

/// Each test's own time (from its slot to its end, not the wait for a slot, which Swift Testing's "passed after"
/// includes) and when it got its slot, appended to `timings.tsv` in `DRIVERD_TEST_LOG_DIR`: `make test` prints the
/// slowest, so the time a suite takes can be traced to its tests (a long test that started late shows it).
enum TestTimings {
    /// About when the suite began: the first use of this type, at the first test's slot request.
    static let runStarted = ContinuousClock.now

    static func record(test: Test, took: Duration, startedAt: Duration) {
        guard let directory = ProcessInfo.processInfo.environment["DRIVERD_TEST_LOG_DIR"], !directory.isEmpty else { return }
        let line = String(format: "%.1f\tstarted at %.1f s\t%@\n", took / .seconds(1), startedAt / .seconds(1), test.id.description)
        // One write to a file opened for appending: concurrent tests' lines never interleave, so no lock.
        mkdir(directory, 0o755)  // EEXIST is the usual answer; open below reports what matters
        let fd = open("\(directory)/timings.tsv", O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard fd >= 0 else { return print("timings: \(directory)/timings.tsv: errno \(errno)") }
        defer { close(fd) }
        if line.utf8CString.withUnsafeBufferPointer({ write(fd, $0.baseAddress, $0.count - 1) }) < 0 {
            print("timings: \(directory)/timings.tsv: errno \(errno)")
        }
    }
}

extension Tag {
    /// A test that takes a minute or more of real time: it is started before the others (see `OwnThreadTrait`).
    @Tag static var long: Self
    /// A test that takes two minutes or more: started first of all, since the suite ends soon after it does.
    @Tag static var longest: Self
}

extension Trait where Self == OwnThreadTrait {
    /// Each test on a thread of its own (see `OwnThreadTrait`).
    static var ownThread: Self { OwnThreadTrait() }
}

/// At most `DRIVERD_TEST_PARALLEL` tests at once (default 8; at 12 the CPU was still idle a third of the time, but
/// timing-bound tests failed now and then: docs/LEAN.md, "CI time"); waiters wait without holding a thread, the longest tests first, then the long,
/// then the rest, each kind in order.
///
/// For the first `headStart` of the run nobody gets a slot: Swift Testing asks for all of them at once, in an order
/// of its own, and the first comers used to fill the slots, so the longest test (207 s) started 74 s in and the
/// suite ended at 281 s; after the head start the slots go by length.
actor TestSlots {
    static let shared = TestSlots(limit: ProcessInfo.processInfo.environment["DRIVERD_TEST_PARALLEL"].flatMap { Int($0) } ?? 8)
    static let headStart = Duration.seconds(2)

    enum Length: Int, CaseIterable {
        case longest, long, short

        init(_ test: Test) {
            self = test.tags.contains(.longest) ? .longest : test.tags.contains(.long) ? .long : .short
        }
    }

    private var free: Int
    private var waiting: [[CheckedContinuation<Void, Never>]] = Length.allCases.map { _ in [] }
    private var headStartBegun = false
    private var headStartOver = false

    init(limit: Int) { free = max(1, limit) }

    func acquire(_ length: Length) async {
        if !headStartBegun {
            headStartBegun = true
            _ = TestTimings.runStarted
            Task {
                do { try await Task.sleep(for: Self.headStart) } catch { /* cancelled: the head start ends now */ }
                self.endHeadStart()
            }
        }
        if headStartOver && free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { continuation in waiting[length.rawValue].append(continuation) }
    }

    func release() {
        free += 1
        dispense()
    }

    private func endHeadStart() {
        headStartOver = true
        dispense()
    }

    private func dispense() {
        guard headStartOver else { return }
        while free > 0, let length = waiting.firstIndex(where: { !$0.isEmpty }) {
            free -= 1
            waiting[length].removeFirst().resume()
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
