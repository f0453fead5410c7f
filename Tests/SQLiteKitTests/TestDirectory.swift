import Foundation

/// A directory of its own for one test, under one directory of this test process that goes when the process
/// exits (the tests leave their databases open; nothing else would remove them).
func testDirectory(_ label: String) -> String {
    let directory = TestRoot.path + "/\(label)-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
}

private enum TestRoot {
    static let path: String = {
        atexit { try? FileManager.default.removeItem(atPath: TestRoot.name) }
        return name
    }()
    static var name: String { FileManager.default.temporaryDirectory.appendingPathComponent("sqlitekit-tests-\(getpid())").path }
}
