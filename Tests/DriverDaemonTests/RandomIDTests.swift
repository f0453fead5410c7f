@testable import DriverDaemon
import Testing

@Suite("Random ids")
struct RandomIDTests {
    @Test("a version 4 UUID, lowercase, never the same twice")
    func shape() {
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = RandomID.uuid()
            let parts = id.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
            #expect(parts == [8, 4, 4, 4, 12], "\(id)")
            #expect(id.allSatisfy { "0123456789abcdef-".contains($0) }, "\(id)")
            #expect(Array(id)[14] == "4", "version nibble of \(id)")
            #expect("89ab".contains(Array(id)[19]), "variant of \(id)")
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }
}
