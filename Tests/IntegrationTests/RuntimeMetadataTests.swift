import Foundation
import Testing

/// The soak's SIGSEGV: Swift 6.3.1's runtime can crash when two threads build NIO's HTTP decoder handler's metadata
/// for the first time at once (`metadata-race`, one process a try). driverd, the kiosk and dispatch-sim build it on
/// their main thread first (`RuntimeMetadata`); after that, racing threads only read it.
@Suite("Swift runtime metadata race")
struct RuntimeMetadataTests {
    /// How many of `tries` processes died by a signal (the shell's status above 128).
    private func crashes(_ arguments: String, tries: Int) throws -> Int {
        let script = """
            crashed=0; i=0
            while [ $i -lt \(tries) ]; do
                "$0" \(arguments) >/dev/null 2>&1; status=$?
                if [ $status -gt 128 ]; then crashed=$((crashed+1)); elif [ $status -ne 0 ]; then echo "exit $status"; exit 1; fi
                i=$((i+1))
            done
            echo $crashed
            """
        // No backtrace for a crash: the backtracer takes most of a second a crash, and the count is what matters.
        let outcome = try runProgram(
            "/bin/sh", ["-c", script, Binaries.path("metadata-race")], environment: ["SWIFT_BACKTRACE": "enable=no"], timeout: .seconds(300))
        let count = outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard outcome.status == 0, let crashed = Int(count) else {
            Issue.record("metadata-race \(arguments) failed: \(outcome.stdout) \(outcome.stderr)")
            return -1
        }
        return crashed
    }

    @Test("prepared on the main thread first, no process of 1,000 crashes, client and server decoders alike", .tags(.long))
    func prepared() throws {
        #expect(try crashes("client --prepared", tries: 1000) == 0)
        #expect(try crashes("server --prepared", tries: 1000) == 0)
        // What the preparation prevents, for the record (not a check: on a loaded machine the threads may not meet).
        print("metadata-race without preparation: \(try crashes("client", tries: 500)) of 500 processes crashed")
    }
}
