import Foundation

/// Starts child processes from one thread that lives as long as the test process. `setpriv --pdeathsig`
/// ties a child's life to the *thread* that forked it: started from a Swift Concurrency worker, a child is
/// killed when the pool retires that thread, long before the test ends.
enum LongLivedSpawner {
    private final class Job: @unchecked Sendable {
        let body: () throws -> Void
        var error: (any Error)?
        let done = DispatchSemaphore(value: 0)
        init(_ body: @escaping () throws -> Void) { self.body = body }
    }

    private nonisolated(unsafe) static var queue: [Job] = []
    private static let lock = NSCondition()
    private nonisolated(unsafe) static let thread: Thread = {
        let thread = Thread {
            while true {
                lock.lock()
                while queue.isEmpty { lock.wait() }
                let job = queue.removeFirst()
                lock.unlock()
                do { try job.body() } catch { job.error = error }
                job.done.signal()
            }
        }
        thread.name = "test-spawner"
        thread.start()
        return thread
    }()

    /// Runs `body` (which starts a process) on the spawner thread and waits for it.
    static func run(_ body: @escaping () throws -> Void) throws {
        _ = thread
        let job = Job(body)
        lock.lock()
        queue.append(job)
        lock.signal()
        lock.unlock()
        job.done.wait()
        if let error = job.error { throw error }
    }
}
