import DriverAPI
import DriverDomain
import Testing

@Suite("Self-update: the desk's decisions (offers, the download, verdicts)")
struct UpdateStateMachineTests {
    /// The offer a release came in is its name here.
    typealias Machine = UpdateStateMachine<String>

    static let a = Machine.Release(sha256: "a", chunks: 3)
    static let b = Machine.Release(sha256: "b", chunks: 2)
    static let c = Machine.Release(sha256: "c", chunks: 1)

    /// Downloads `release` (taken already) to its end, the whole file matching.
    static func download(_ machine: inout Machine, _ release: Machine.Release) {
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
        var machine = Machine()
        #expect(machine.offered(Self.a, offer: "a") == .take(replacing: nil))
        #expect(machine.offered(Self.a, offer: "a") == .ignore)
        machine.chunkStored(Self.a, index: 0)
        #expect(machine.chunksHave == 1)
        #expect(machine.offered(Self.b, offer: "b") == .take(replacing: Self.a))
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
        typealias M = Machine
        struct Row {
            var name: String
            var setup: (inout M) -> Void
            var event: (inout M) -> String
            var expected: String
            var phase: M.Phase
            var current: String?
        }
        let rows: [Row] = [
            Row(name: "pause while downloading", setup: { _ = $0.offered(Self.a, offer: "a") }, event: { $0.paused("no link"); return "" }, expected: "", phase: .paused, current: "a"),
            Row(name: "a chunk after a pause resumes", setup: { _ = $0.offered(Self.a, offer: "a"); $0.paused("no link") },
                event: { $0.chunkStored(Self.a, index: 0); return "\($0.chunksHave)" }, expected: "1", phase: .downloading, current: "a"),
            Row(name: "whole mismatch: refused, nothing current", setup: { _ = $0.offered(Self.c, offer: "c"); $0.chunkStored(Self.c, index: 0) },
                event: { "\($0.wholeChecked(Self.c, matches: false))" }, expected: "refuse", phase: .downloading, current: nil),
            Row(name: "whole checked before every chunk: stop", setup: { _ = $0.offered(Self.a, offer: "a") },
                event: { "\($0.wholeChecked(Self.a, matches: true))" }, expected: "stop", phase: .downloading, current: "a"),
            Row(name: "install asked once downloaded", setup: { _ = $0.offered(Self.c, offer: "c"); Self.download(&$0, Self.c) },
                event: { $0.installAsked(now: 0); return "" }, expected: "", phase: .installing, current: "c"),
            Row(name: "install not asked mid-download", setup: { _ = $0.offered(Self.a, offer: "a") },
                event: { $0.installAsked(now: 0); return "" }, expected: "", phase: .downloading, current: "a"),
            Row(name: "an offer during the install waits", setup: { _ = $0.offered(Self.c, offer: "c"); Self.download(&$0, Self.c); $0.installAsked(now: 0) },
                event: { "\($0.offered(Self.b, offer: "b"))" }, expected: "wait", phase: .installing, current: "c"),
            Row(name: "applied: the current release ends", setup: { _ = $0.offered(Self.c, offer: "c"); Self.download(&$0, Self.c); $0.installAsked(now: 0) },
                event: { let v = $0.verdict(sha256: "c", applied: true); return "\(v.release ?? "-") \(v.giveUp ?? "-") \(v.clearFiles)" },
                expected: "c - true", phase: .downloading, current: nil),
            Row(name: "a verdict for another release leaves the current one", setup: { _ = $0.offered(Self.a, offer: "a") },
                event: { let v = $0.verdict(sha256: "z", applied: false); return "\(v.release ?? "-") \(v.giveUp ?? "-") \(v.clearFiles)" },
                expected: "z z false", phase: .downloading, current: "a"),
            Row(name: "an older updater's verdict names nothing: the current release", setup: { _ = $0.offered(Self.c, offer: "c"); Self.download(&$0, Self.c); $0.installAsked(now: 0) },
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
        var machine = Machine()
        _ = machine.offered(Self.a, offer: "a")
        Self.download(&machine, Self.a)
        machine.installAsked(now: 0)
        #expect(machine.offered(Self.b, offer: "b") == .wait)
        // Offered again while it waits: nothing new.
        #expect(machine.offered(Self.b, offer: "b") == .ignore)
        // Nothing of b is fetched while a is being installed.
        #expect(machine.nextDownloadStep(Self.b) == .stop)
        let verdict = machine.verdict(sha256: "a", applied: false)
        #expect(verdict.release == "a" && verdict.giveUp == "a" && verdict.clearFiles && verdict.take == Self.b)
        #expect(machine.current == Self.b && machine.phase == .downloading && machine.nextDownloadStep(Self.b) == .fetch(index: 0))
        // The rolled-back release is never taken again.
        #expect(machine.givenUp.contains("a"))
        Self.download(&machine, Self.b)
        machine.installAsked(now: 0)
        #expect(machine.offered(Self.a, offer: "a") == .ignore)
    }

    @Test("the release being installed, offered to the process its install started, and the one just judged, are known: no rule is asked again")
    func knownReleases() {
        // The new version's driverd, started by dpkg's postinst, finds its own release on disk with the install asked.
        var machine = Machine()
        #expect(machine.resume(Self.a, offer: "a", installed: .older, installAsked: true, now: 0) == .countChunks)
        machine.resumedDownload(chunksHave: 3, complete: true)
        #expect(machine.knows(Self.a) && !machine.knows(Self.b))
        // Rolled back: given up. Applied: the last judged, until the backend stops offering it.
        _ = machine.verdict(sha256: "a", applied: false)
        #expect(machine.knows(Self.a) && machine.current == nil)
        _ = machine.offered(Self.b, offer: "b")
        Self.download(&machine, Self.b)
        machine.installAsked(now: 0)
        _ = machine.verdict(sha256: "b", applied: true)
        #expect(machine.knows(Self.b) && !machine.givenUp.contains("b") && machine.offered(Self.b, offer: "b") == .ignore)
        #expect(!machine.knows(Self.c) && machine.offered(Self.c, offer: "c") == .take(replacing: nil))
    }

    @Test("resumed from disk: complete, partial, asked, or found installed; something newer installed drops the files; given up across restarts")
    func resumed() {
        var machine = Machine(givenUp: ["c"])
        #expect(machine.offered(Self.c, offer: "c") == .ignore)
        #expect(machine.resume(Self.a, offer: "a", installed: .older, installAsked: false, now: 0) == .countChunks)
        machine.resumedDownload(chunksHave: 2, complete: false)
        #expect(machine.nextDownloadStep(Self.a) == .fetch(index: 2) && !machine.needsStoring && machine.offer == "a")
        _ = machine.resume(Self.a, offer: "a", installed: .older, installAsked: false, now: 0)
        machine.resumedDownload(chunksHave: 0, complete: true)
        #expect(machine.phase == .downloaded && machine.chunksHave == 3)
        _ = machine.resume(Self.a, offer: "a", installed: .older, installAsked: true, now: 0)
        machine.resumedDownload(chunksHave: 9, complete: false)
        #expect(machine.phase == .installing && machine.chunksHave == 3)
        // The process its install started: the verdict follows, looked for soon.
        var started = Machine()
        _ = started.resume(Self.a, offer: "a", installed: .same, installAsked: false, now: 100)
        started.resumedDownload(chunksHave: 0, complete: true)
        #expect(started.phase == .installing && started.nextStep(now: 101) == .verdictSoon)
        var newer = Machine()
        #expect(newer.resume(Self.a, offer: "a", installed: .newer, installAsked: true, now: 0) == .dropFiles && newer.current == nil)
    }

    @Test("the installed version against a release's: Debian order; unknown or unparsable counts as older")
    func installedVersion() {
        #expect(Machine.installed("0.2.0", against: "0.2.0") == .same)
        #expect(Machine.installed("0.2.1", against: "0.2.0") == .newer)
        #expect(Machine.installed("1:0.1", against: "0.9") == .newer)
        #expect(Machine.installed("0.2.0~rc1", against: "0.2.0") == .older)
        #expect(Machine.installed(nil, against: "0.2.0") == .older)
        // Downloaded: found installed goes to its verdict, older asks the window; the window's wait is shown.
        var machine = Machine()
        _ = machine.offered(Self.c, offer: "c")
        #expect(machine.readyToInstall(installed: .older) == .none, "not downloaded yet")
        machine.stored("c")
        Self.download(&machine, Self.c)
        #expect(machine.readyToInstall(installed: .older) == .askWindow && machine.phase == .downloaded)
        machine.windowWaits("on shift")
        #expect(machine.waitingFor == "on shift")
        #expect(machine.readyToInstall(installed: .same) == .verdictFollows && machine.phase == .installing)
    }

    @Test("refused offers are answered once; a paused download says each new reason once; the offer's files are stored once")
    func refusedAndPaused() {
        var machine = Machine()
        let outcome = UpdateOutcome(package: "driverd", version: "9", status: .refused, reason: "bad signature", at: 0)
        machine.refusedOffer("digest-1", outcome: outcome)
        #expect(machine.answered("digest-1", Self.a) && !machine.answered("digest-2", Self.a) && machine.lastOutcome == outcome)
        _ = machine.offered(Self.a, offer: "a")
        #expect(machine.needsStoring && machine.nextStep(now: 0) == .again)
        machine.stored("b")
        #expect(machine.needsStoring, "another offer's files")
        machine.stored("a")
        #expect(!machine.needsStoring)
        let first = machine.paused("the backend is not reachable"), again = machine.paused("the backend is not reachable")
        #expect(first && !again && machine.phase == .paused)
        #expect(machine.waitingFor == "the backend is not reachable" && machine.nextStep(now: 0) == .later)
        machine.chunkStored(Self.a, index: 0)
        #expect(machine.waitingFor == nil && machine.phase == .downloading && machine.nextStep(now: 0) == .again)
    }

    @Test("the runner's pace: at once while there is work; the verdict looked for every 2 s for 10 minutes from the ask, then at the round's pace; nothing without a release")
    func pace() {
        #expect(Machine.verdictWatchSeconds == 600 && Machine.verdictSeconds == 2 && Machine.roundSeconds == 30)
        var machine = Machine()
        #expect(machine.nextStep(now: 0) == .idle && Machine.wait(after: .idle) == nil)
        _ = machine.offered(Self.c, offer: "c")
        machine.stored("c")
        #expect(machine.nextStep(now: 0) == .again && Machine.wait(after: .again) == 0)
        Self.download(&machine, Self.c)
        #expect(machine.nextStep(now: 0) == .later && Machine.wait(after: .later) == 30)
        let asked = 5_000.0
        machine.installAsked(now: asked)
        #expect(machine.nextStep(now: asked) == .verdictSoon && Machine.wait(after: .verdictSoon) == 2)
        #expect(machine.nextStep(now: asked + 599) == .verdictSoon)
        // driverd-update died without a verdict (or the unit slept through it): no 2-s wake-ups for ever.
        #expect(machine.nextStep(now: asked + 600) == .later && machine.nextStep(now: asked + 86_400) == .later)
        // An offer taken during the install waits; the verdict takes it, and its files are to store at once.
        _ = machine.offered(Self.b, offer: "b")
        _ = machine.verdict(sha256: "c", applied: true)
        #expect(machine.offer == "b" && machine.needsStoring && machine.nextStep(now: asked) == .again)
    }
}
