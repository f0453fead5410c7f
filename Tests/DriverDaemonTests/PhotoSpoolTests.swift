@testable import DriverDaemon
import DriverAPI
import DriverDomain
import DriverStore
import Foundation
import Testing

@Suite("Photo spool")
struct PhotoSpoolTests {
    private static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data(repeating: 7, count: 100)
    private let stamp = Stamp(time: 1_800_000_000, source: .gps)

    private func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "photospool-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("a PNG is copied into the spool whole, with its size and hash")
    func takesAPhoto() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.png.write(to: URL(fileURLWithPath: directory + "/in.png"))
        let spooled = try PhotoSpool(stateDirectory: directory).take(directory + "/in.png", taskId: "t1", lat: 1, lng: 2, stamp: stamp)
        #expect(spooled.bytes == Self.png.count)
        #expect(spooled.contentType == "image/png")
        #expect(FileManager.default.contents(atPath: spooled.file) == Self.png)
        #expect(try DurableFile.regularFileSize(spooled.file) == Self.png.count)
    }

    @Test("an empty file, a directory, a missing file, a large file and a text file are refused with the reason")
    func refusals() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        FileManager.default.createFile(atPath: directory + "/empty.png", contents: Data())
        try Data("hello".utf8).write(to: URL(fileURLWithPath: directory + "/text.png"))
        try Self.png.write(to: URL(fileURLWithPath: directory + "/big.png"))
        let spool = PhotoSpool(stateDirectory: directory, maxBytes: 50)
        let cases = [("empty.png", "is empty"), ("", "is not a regular file"), ("missing.png", "cannot read"),
                     ("big.png", "a photo may have at most 50"), ("text.png", "is not a JPEG or PNG image")]
        for (name, reason) in cases {
            #expect {
                _ = try spool.take(directory + "/" + name, taskId: "t1", lat: nil, lng: nil, stamp: stamp)
            } throws: { error in
                "\(error)".contains(reason)
            }
        }
    }
}
