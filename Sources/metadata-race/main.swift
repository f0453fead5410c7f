import Glibc
import RuntimeMetadata
import Synchronization

/// Reproduces a Swift 6.3.1 runtime crash: two threads, released at the same instant, each the first in this process
/// to build NIO's HTTP decoder handler (`client`: the response decoder driverd's HTTP client and WebSocket build;
/// `server`: the request decoder the kiosk and dispatch-sim build). With `--prepared`, `RuntimeMetadata` builds it on
/// the main thread first, as driverd, the kiosk and dispatch-sim do. One process is one try: the runtime caches the
/// metadata, so only a process's first build can race. Exits 0, or dies with SIGSEGV.
let arguments = CommandLine.arguments.dropFirst()
let server = arguments.contains("server")
if arguments.contains("--prepared") {
    if server { RuntimeMetadata.instantiateHTTPServerTypes() } else { RuntimeMetadata.instantiateHTTPClientTypes() }
}
MetadataRace.run(threads: 2, server: server)

enum MetadataRace {
    private static let arrived = Atomic<Int>(0)
    private static let threads = Atomic<Int>(0)
    private static let server = Atomic<Bool>(false)

    static func run(threads count: Int, server isServer: Bool) {
        threads.store(count, ordering: .sequentiallyConsistent)
        server.store(isServer, ordering: .sequentiallyConsistent)
        var started = [pthread_t]()
        for _ in 0..<count {
            var thread = pthread_t()
            // Exit 2 (not a signal) when a thread cannot start: the test then says so instead of counting a crash.
            guard pthread_create(&thread, nil, { _ in MetadataRace.race(); return nil }, nil) == 0 else { exit(2) }
            started.append(thread)
        }
        for thread in started { pthread_join(thread, nil) }
    }

    /// Spins until every thread has arrived, so the builds start within nanoseconds of each other.
    private static func race() {
        arrived.add(1, ordering: .sequentiallyConsistent)
        while arrived.load(ordering: .sequentiallyConsistent) < threads.load(ordering: .sequentiallyConsistent) {}
        // The very builds RuntimeMetadata makes: what it prepares is what races here.
        if server.load(ordering: .sequentiallyConsistent) {
            RuntimeMetadata.instantiateHTTPServerTypes()
        } else {
            RuntimeMetadata.instantiateHTTPClientTypes()
        }
    }
}
