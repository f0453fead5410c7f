import Foundation
import TOMLReader
import Testing

@Suite("TOML reader")
struct TOMLReaderTests {
    static func read(_ text: String) throws -> TOMLTable { try TOMLReader.table(text) }

    static func failure(_ text: String) -> TOMLReader.Error? {
        do {
            _ = try TOMLReader.table(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("tables, dotted and quoted keys, arrays of tables, in the document's order")
    func structure() throws {
        let table = try Self.read("""
            # a comment
            top = 1
            [gps]
            gpsd = "127.0.0.1:2947" # after a value
            site."a b".c = true
            [ backend . 'retry' ]
            max = 5
            [[stops]]
            id = "a"
            [[stops]]
            id = "b"
            [stops.extra]
            note = 'x'
            """)
        #expect(table.keys == ["top", "gps", "backend", "stops"])
        #expect(table["top"] == .integer(1))
        #expect(table["gps"]?.table?["gpsd"]?.string == "127.0.0.1:2947")
        #expect(table["gps"]?.table?["site"]?.table?["a b"]?.table?["c"] == .boolean(true))
        #expect(table["backend"]?.table?["retry"]?.table?["max"]?.int == 5)
        guard case .array(let stops) = table["stops"] else { Issue.record("stops: \(String(describing: table["stops"]))"); return }
        #expect(stops.map { $0.table?["id"]?.string } == ["a", "b"])
        #expect(stops[1].table?["extra"]?.table?["note"]?.string == "x")
    }

    @Test("strings: escapes, literal, multi-line with a trimmed first newline and line-ending backslashes")
    func strings() throws {
        let table = try Self.read(#"""
            basic = "tab\there \"q\" \\ \u00E9 \U0001F69A"
            literal = 'C:\path\n'
            multi = """
            one
              two \
                three"""
            quotes = """a""b"""""
            raw = '''
            it's \n'''
            empty = ""
            """#)
        #expect(table["basic"]?.string == "tab\there \"q\" \\ é 🚚")
        #expect(table["literal"]?.string == #"C:\path\n"#)
        #expect(table["multi"]?.string == "one\n  two three")
        #expect(table["quotes"]?.string == "a\"\"b\"\"")
        #expect(table["raw"]?.string == #"it's \n"#)
        #expect(table["empty"]?.string == "")
    }

    @Test("numbers, booleans, dates and nested arrays and inline tables")
    func values() throws {
        let table = try Self.read("""
            a = +42
            b = -1_000
            c = 0xDEAD_beef
            d = 0o17
            e = 0b1010
            f = 3.25
            g = -1e-3
            h = 6.02E+23
            i = inf
            j = -inf
            k = nan
            l = true
            m = 1979-05-27T07:32:00Z
            n = 1979-05-27 07:32:00.999-07:00
            o = 07:32:00
            p = 1979-05-27
            q = [ 1, "two", [3.0], { x = 4 }, ]
            r = [
              1, # one
              2,
            ]
            s = { name = "x", pos.lat = 49.0 }
            t = 9223372036854775807
            u = -9223372036854775808
            v = 0
            """)
        #expect(table["a"] == .integer(42))
        #expect(table["b"] == .integer(-1000))
        #expect(table["c"] == .integer(0xDEAD_BEEF))
        #expect(table["d"] == .integer(15))
        #expect(table["e"] == .integer(10))
        #expect(table["f"] == .float(3.25))
        #expect(table["g"] == .float(-0.001))
        #expect(table["h"] == .float(6.02e23))
        #expect(table["i"] == .float(.infinity))
        #expect(table["j"] == .float(-.infinity))
        #expect(table["k"]?.double?.isNaN == true)
        #expect(table["l"] == .boolean(true))
        #expect(table["m"] == .dateTime("1979-05-27T07:32:00Z"))
        #expect(table["n"] == .dateTime("1979-05-27 07:32:00.999-07:00"))
        #expect(table["o"] == .dateTime("07:32:00"))
        #expect(table["p"] == .dateTime("1979-05-27"))
        #expect(table["q"] == .array([.integer(1), .string("two"), .array([.float(3)]), .table(try Self.read("x = 4"))]))
        #expect(table["r"] == .array([.integer(1), .integer(2)]))
        #expect(table["s"]?.table?["pos"]?.table?["lat"] == .float(49))
        #expect(table["t"] == .integer(Int.max))
        #expect(table["u"] == .integer(Int.min))
        #expect(table["v"] == .integer(0))
    }

    @Test("Windows line ends and a byte-order mark read as the same document")
    func windows() throws {
        let table = try Self.read("\u{FEFF}[gps]\r\nurl = \"x\" # c\r\n\r\n[kiosk]\r\nunits = 'uk'\r\n")
        #expect(table["gps"]?.table?["url"]?.string == "x")
        #expect(table["kiosk"]?.table?["units"]?.string == "uk")
    }

    /// Each of these aborted toml++ (TOMLKit's parser) or is a rule of TOML 1.0: an error with its line and column.
    @Test("malformed documents are errors with their place, never an abort", arguments: [
        ("[ü]", 1, 2), ("a = 1\n[\n", 2, 2), ("[[", 1, 3), ("[.a]", 1, 2), ("[a.]", 1, 4), ("[]", 1, 2),
        ("[\u{30A}\u{FFFD}", 1, 2), ("[gps]\r\nurl = 1\r\n[ü]\r\n", 3, 2), ("s = [}", 1, 6), ("s = [,]", 1, 6),
        ("a = 1\na = 2", 2, 1), ("[a]\n[a]", 2, 1), ("[a]\nb = 1\n[a.b]", 3, 1), ("a = {b = 1}\n[a]", 2, 1),
        ("a = {b = 1}\na.c = 2", 2, 1), ("a = 1 2", 1, 7), ("a = \"open", 1, 5), ("a = 01", 1, 5), ("a = 1__0", 1, 5),
        ("a = 9223372036854775808", 1, 5), ("a = 1.", 1, 5), ("a = .5", 1, 5), ("a = \"\\q\"", 1, 6), ("a = {b = 1,}", 1, 12),
        ("a = 1\r", 1, 6), ("a = tru", 1, 5), ("= 1", 1, 1), ("a = \"\u{1}\"", 1, 6), ("a = 1979-13-01", 1, 5),
        ("[[a]]\n[a]", 2, 1), ("a = [1]\n[[a]]", 2, 1),
    ])
    func malformed(_ text: String, line: Int, column: Int) throws {
        let error = try #require(Self.failure(text), "\(text.debugDescription) was read")
        #expect((error.line, error.column) == (line, column), "\(text.debugDescription): \(error)")
    }

    @Test("nesting and key parts are bounded: a hostile file is an error, not a stack overflow")
    func bounded() throws {
        #expect(Self.failure("a = " + String(repeating: "[", count: 100_000))?.reason.contains("nested deeper") == true)
        #expect(Self.failure("a = " + String(repeating: "{b = ", count: 10_000))?.reason.contains("nested deeper") == true)
        #expect(Self.failure(Array(repeating: "k", count: 10_000).joined(separator: ".") + " = 1")?.reason.contains("parts") == true)
        #expect(try Self.read("a = " + String(repeating: "[", count: 32) + String(repeating: "]", count: 32))["a"] != nil)
    }
}
