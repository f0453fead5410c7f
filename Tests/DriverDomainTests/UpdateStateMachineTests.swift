import DriverDomain
import Testing

@Suite("Self-update: the desk's decisions (offers, the download, verdicts)")
struct UpdateStateMachineTests {
    static let a = UpdateStateMachine.Release(sha256: "a", chunks: 3)
    static let b = UpdateStateMachine.Release(sha256: "b", chunks: 2)
    static let c = UpdateStateMachine.Release(sha256: "c", chunks: 1)

    /// Downloads `release` (taken already) to its end, the whole file matching.
    static func download(_ machine: inout UpdateStateMachine, _ release: UpdateStateMachine.Release) {
        for index in 0..<release.chunks {
            #expect(machine.nextDownloadStep(release) == .fetch(index: index))
            machine.chunkStored(release, index: index)
        }
        #expect(machine.nextDownloadStep(release) == .checkWhole)
        #expect(machine.wholeChecked(release, matches: true) == .keep)
        #expect(machine.phase == .downloaded)
    }

    @Test("offers: taken, the same again ignored, a newer one replaces a download at once (its next step is stop)")
    func offers() {
        var machine = UpdateStateMachine()
        #expect(machine.offered(Self.a) == .take(replacing: nil))
        #expect(machine.offered(Self.a) == .ignore)
        machine.chunkStored(Self.a, index: 0)
        #expect(machine.chunksHave == 1)
        #expect(machine.offered(Self.b) == .take(replacing: Self.a))
        // The replaced download stops; a chunk of it that was in flight counts for nothing.
        #expect(machine.nextDownloadStep(Self.a) == .stop)
        machine.chunkStored(Self.a, index: 1)
        #expect(machine.chunksHave == 0 && machine.current == Self.b)
        #expect(machine.nextDownloadStep(Self.b) == .fetch(index: 0))
        // A chunk stored out of order is not counted.
        machine.chunkStored(Self.b, index: 1)
        #expect(machine.chunksHave == 0)
    }

    @Test("a table of transitions: each event in each phase")
    func table() {
        typealias M = UpdateStateMachine
        struct Row {
            var name: String
            var setup: (inout M) -> Void
            var event: (inout M) -> String
            var expected: String
            var phase: M.Phase
            var current: String?
        }
        let rows: [Row] = [
            Row(name: "pause while downloading", setup: { _ = $0.offered(Self.a) }, event: { $0.paused(Self.a); return "" }, expected: "", phase: .paused, current: "a"),
            Row(name: "a chunk after a pause resumes", setup: { _ = $0.offered(Self.a); $0.paused(Self.a) },
                event: { $0.chunkStored(Self.a, index: 0); return "\($0.chunksHave)" }, expected: "1", phase: .downloading, current: "a"),
            Row(name: "whole mismatch: refused, nothing current", setup: { _ = $0.offered(Self.c); $0.chunkStored(Self.c, index: 0) },
                event: { "\($0.wholeChecked(Self.c, matches: false))" }, expected: "refuse", phase: .downloading, current: nil),
            Row(name: "whole checked before every chunk: stop", setup: { _ = $0.offered(Self.a) },
                event: { "\($0.wholeChecked(Self.a, matches: true))" }, expected: "stop", phase: .downloading, current: "a"),
            Row(name: "install asked once downloaded", setup: { _ = $0.offered(Self.c); Self.download(&$0, Self.c) },
                event: { $0.installAsked(); return "" }, expected: "", phase: .installing, current: "c"),
            Row(name: "install not asked mid-download", setup: { _ = $0.offered(Self.a) },
                event: { $0.installAsked(); return "" }, expected: "", phase: .downloading, current: "a"),
            Row(name: "an offer during the install waits", setup: { _ = $0.offered(Self.c); Self.download(&$0, Self.c); $0.installAsked() },
                event: { "\($0.offered(Self.b))" }, expected: "wait", phase: .installing, current: "c"),
            Row(name: "applied: the current release ends", setup: { _ = $0.offered(Self.c); Self.download(&$0, Self.c); $0.installAsked() },
                event: { let v = $0.verdict(sha256: "c", applied: true); return "\(v.release ?? "-") \(v.giveUp ?? "-") \(v.clearFiles)" },
                expected: "c - true", phase: .downloading, current: nil),
            Row(name: "a verdict for another release leaves the current one", setup: { _ = $0.offered(Self.a) },
                event: { let v = $0.verdict(sha256: "z", applied: false); return "\(v.release ?? "-") \(v.giveUp ?? "-") \(v.clearFiles)" },
                expected: "z z false", phase: .downloading, current: "a"),
            Row(name: "an older updater's verdict names nothing: the current release", setup: { _ = $0.offered(Self.c); Self.download(&$0, Self.c); $0.installAsked() },
                event: { let v = $0.verdict(sha256: nil, applied: false); return "\(v.release ?? "-") \(v.giveUp ?? "-") \(v.clearFiles)" },
                expected: "c c true", phase: .downloading, current: nil),
        ]
        for row in rows {
            var machine = M()
            row.setup(&machine)
            let result = row.event(&machine)
            #expect(result == row.expected, "\(row.name): \(result)")
            #expect(machine.phase == row.phase, "\(row.name): \(machine.phase)")
            #expect(machine.current?.sha256 == row.current, "\(row.name): \(String(describing: machine.current))")
        }
    }

    @Test("a newer release offered during an install that is then rolled back: the rolled-back one is given up, the newer one taken next")
    func newerDuringInstall() {
        var machine = UpdateStateMachine()
        _ = machine.offered(Self.a)
        Self.download(&machine, Self.a)
        machine.installAsked()
        #expect(machine.offered(Self.b) == .wait)
        // Offered again while it waits: nothing new.
        #expect(machine.offered(Self.b) == .ignore)
        // Nothing of b is fetched while a is being installed.
        #expect(machine.nextDownloadStep(Self.b) == .stop)
        let verdict = machine.verdict(sha256: "a", applied: false)
        #expect(verdict.release == "a" && verdict.giveUp == "a" && verdict.clearFiles && verdict.take == Self.b)
        #expect(machine.current == Self.b && machine.phase == .downloading && machine.nextDownloadStep(Self.b) == .fetch(index: 0))
        // The rolled-back release is never taken again.
        #expect(machine.givenUp.contains("a"))
        Self.download(&machine, Self.b)
        machine.installAsked()
        #expect(machine.offered(Self.a) == .ignore)
    }

    @Test("the release being installed, offered to the process its install started, and the one just judged, are known: no rule is asked again")
    func knownReleases() {
        // The new version's driverd, started by dpkg's postinst, finds its own release on disk with the install asked.
        var machine = UpdateStateMachine()
        machine.resumed(Self.a, chunksHave: 3, complete: true, installAsked: true)
        #expect(machine.knows(Self.a) && !machine.knows(Self.b))
        // Rolled back: given up. Applied: the last judged, until the backend stops offering it.
        _ = machine.verdict(sha256: "a", applied: false)
        #expect(machine.knows(Self.a) && machine.current == nil)
        _ = machine.offered(Self.b)
        Self.download(&machine, Self.b)
        machine.installAsked()
        _ = machine.verdict(sha256: "b", applied: true)
        #expect(machine.knows(Self.b) && !machine.givenUp.contains("b") && machine.offered(Self.b) == .ignore)
        #expect(!machine.knows(Self.c) && machine.offered(Self.c) == .take(replacing: nil))
    }

    @Test("resumed from disk: complete, partial, asked; given up across restarts")
    func resumed() {
        var machine = UpdateStateMachine(givenUp: ["c"])
        #expect(machine.offered(Self.c) == .ignore)
        machine.resumed(Self.a, chunksHave: 2, complete: false, installAsked: false)
        #expect(machine.nextDownloadStep(Self.a) == .fetch(index: 2))
        machine.resumed(Self.a, chunksHave: 0, complete: true, installAsked: false)
        #expect(machine.phase == .downloaded && machine.chunksHave == 3)
        machine.resumed(Self.a, chunksHave: 9, complete: false, installAsked: true)
        #expect(machine.phase == .installing && machine.chunksHave == 3)
        machine.superseded()
        #expect(machine.current == nil)
    }
}
