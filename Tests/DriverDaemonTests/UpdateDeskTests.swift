@testable import DriverDaemon
import BackendContract
import DriverDomain
import DriverStore
import Foundation
import Testing

@Suite("Self-update: dpkg's status, the day's budget, a download's resume")
struct UpdateDeskTests {
    @Test("dpkg's status file: only packages installed, with version and architecture; continuation lines ignored")
    func installedPackages() {
        let status = """
            Package: driverd
            Status: install ok installed
            Priority: optional
            Version: 0.1.0+good2
            Architecture: amd64
            Description: the in-vehicle agent
             Version: 9.9 (a description line, not a field)

            Package: driverd-kiosk
            Status: deinstall ok config-files
            Version: 0.1.0
            Architecture: amd64

            Package: tzdata
            Status: install ok installed
            Version: 2024a-0+deb12u1
            Architecture: all
            """
        let packages = InstalledPackages(statusFile: status).packages
        #expect(packages["driverd"] == .init(version: "0.1.0+good2", architecture: "amd64"))
        #expect(packages["driverd-kiosk"] == nil)
        #expect(packages["tzdata"]?.architecture == "all")
        #expect(InstalledPackages(statusFile: "").packages.isEmpty)
    }

    @Test("the day's budget: what was spent today counts, a new day starts from nothing")
    func budget() {
        var budget = DailyBudget()
        #expect(budget.allows(1000, day: 10, max: 1000) && !budget.allows(1001, day: 10, max: 1000))
        budget.spend(800, day: 10)
        #expect(!budget.allows(300, day: 10, max: 1000) && budget.allows(200, day: 10, max: 1000))
        #expect(budget.allows(1000, day: 11, max: 1000) && budget.spent(day: 11) == 0)
        budget.spend(10, day: 11)
        #expect(budget.spent(day: 11) == 10 && budget.spent(day: 10) == 0)
    }

    @Test("a partial download keeps its good chunks and is cut after them: a torn or wrong chunk goes")
    func resume() throws {
        let directory = NSTemporaryDirectory() + "update-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = UpdateFiles(directory: directory)
        let bytes = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 31) })
        let chunks = stride(from: 0, to: bytes.count, by: 4096).map { FleetSignature.sha256Hex(bytes[$0..<min($0 + 4096, bytes.count)]) }
        let manifest = ReleaseManifest(
            package: "driverd", version: "0.2.0", architecture: "amd64", size: bytes.count, sha256: FleetSignature.sha256Hex(bytes), chunkSize: 4096,
            chunks: chunks, issuedAt: 0)
        #expect(ReleaseRules.problem(of: manifest) == nil && manifest.length(ofChunk: 2) == 10_000 - 8192)
        #expect(try files.verifiedChunks(of: manifest) == 0)
        // Two chunks and a torn third.
        try DurableFile.write(bytes.prefix(8192 + 100), to: files.part, at: 0)
        #expect(try files.verifiedChunks(of: manifest) == 2)
        #expect(try DurableFile.regularFileSize(files.part) == 8192)
        // A wrong second chunk: only the first stands.
        var wrong = bytes.prefix(8192)
        wrong[5000] ^= 0xFF
        try DurableFile.write(wrong, to: files.part, at: 0)
        #expect(try files.verifiedChunks(of: manifest) == 1)
        // All of it.
        try DurableFile.write(bytes, to: files.part, at: 0)
        #expect(try files.verifiedChunks(of: manifest) == 3)
        #expect(try UpdateFiles.sha256(ofFile: files.part) == manifest.sha256)
    }
}
