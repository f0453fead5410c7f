// Shows that ThreadSanitizer cannot see Synchronization.Mutex on Linux (Swift 6.3: it locks with a futex, not a
// pthread mutex TSan intercepts): two threads count to 200,000 under one Mutex, correctly, and TSan reports a race.
//   swiftc -sanitize=thread -g scripts/tsan-mutex-check.swift -o /tmp/tsan-mutex-check && /tmp/tsan-mutex-check
// The suppressions in scripts/tsan.supp that cite this file rest on it: run it again with a new toolchain, and drop
// them when it no longer reports.
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
final class Box: @unchecked Sendable { var n = 0 }
let box = Box()
let lock = Mutex(())
func work() { for _ in 0..<100000 { lock.withLock { _ in box.n += 1 } } }
var threads: [pthread_t] = []
for _ in 0..<2 {
    var t = pthread_t()
    pthread_create(&t, nil, { _ in work(); return nil }, nil)
    threads.append(t)
}
for t in threads { pthread_join(t, nil) }
print(box.n)
