import DriverAPI
import Foundation
import JSONRPC
import Logging
import Testing

@testable import DriverKiosk

/// What `kiosk.describe` tells the page, and that the page takes the local API's error numbers from it.
@Suite("The kiosk's description")
struct KioskDescribeTests {
    @Test("every error of the local API by its name and number, from its one declaration")
    func errors() throws {
        let bridge = KioskBridge(configuration: KioskConfiguration(), logger: Logger(label: "test"))
        guard case .object(let errors)? = bridge.describe()["errors"] else {
            Issue.record("no errors in \(bridge.describe())")
            return
        }
        #expect(errors.count == APIError.Kind.all.count)
        for kind in APIError.Kind.all {
            let name = try #require(kind.name)
            #expect(errors[name] == .number(String(kind.wireCode)), "\(name)")
        }
        #expect(APIError.Kind.proofRejected.name == "proofRejected" && APIError.Kind(wireCode: 1999).name == nil)
    }

    @Test("the page names every error it handles as the declaration does, and copies no number")
    func pageUsesNames() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../kiosk/www/kiosk.js")
        let script = try String(contentsOf: page, encoding: .utf8)
        let known = Set(APIError.Kind.all.compactMap(\.name))
        // `errorName(error) === "…"` and the page's own `reject({ name: "…"`, anywhere; `case "…":` in refusalText.
        let refusals = try #require(script.firstMatch(of: /function refusalText[\s\S]*?\n}\n/)).output
        let used = (script.matches(of: /(?:errorName\(error\) === |reject\(\{ name: )"([A-Za-z]+)"/).map { String($0.output.1) })
            + refusals.matches(of: /case "([A-Za-z]+)"/).map { String($0.output.1) }
        #expect(used.count >= 6, "\(used)")
        for name in used { #expect(known.contains(name), "kiosk.js handles \(name), which APIError does not declare") }
        let numbers = script.matches(of: /\b(?:100[1-9]|-32[0-9]{3})\b/).map { String($0.output) }
        #expect(numbers.isEmpty, "kiosk.js copies error numbers: \(numbers)")
    }
}
