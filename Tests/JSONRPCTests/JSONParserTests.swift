import DriverAPI
import JSONRPC
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    @Test("accepts valid JSON and keeps number literals", arguments: [
        ("1", JSONValue.number("1")), ("-0", .number("-0")), ("1.50", .number("1.50")), ("1e3", .number("1e3")),
        ("12345678901234567890", .number("12345678901234567890")), ("-1.5E-7", .number("-1.5E-7")),
        ("true", .bool(true)), ("false", .bool(false)), ("null", .null), (" \"a\\nb\" ", .string("a\nb")),
        ("\"\\u00e9\\ud83d\\ude00\"", .string("é😀")), ("\"é\"", .string("é")),
        ("[1,[2,{}]]", .array([.number("1"), .array([.number("2"), .object([:])])])),
        ("{\"a\":{\"b\":[]}}", .object(["a": .object(["b": .array([])])])),
    ])
    func valid(text: String, expected: JSONValue) throws {
        #expect(try JSONParser.parse(Array(text.utf8)) == expected)
    }

    @Test("refuses what is not JSON", arguments: [
        "", " ", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "[1,]", "{\"a\":1,}", "{a:1}", "[1 2]", "\"abc",
        "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"a\u{01}b\"", "{\"a\"}", "1 2", "[", "}", "'a'", "NaN",
    ])
    func invalid(text: String) {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test("refuses invalid UTF-8 and NUL bytes")
    func invalidBytes() {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xFF, 0x22], [0x00], [0x22, 0x00, 0x22]] {
            #expect(throws: JSONParser.Error.self) { try JSONParser.parse(bytes) }
        }
    }

    @Test("bounds nesting depth")
    func depth() throws {
        let deep = String(repeating: "[", count: JSONParser.maxDepth + 1) + String(repeating: "]", count: JSONParser.maxDepth + 1)
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(Array(deep.utf8)) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        _ = try JSONParser.parse(Array(fine.utf8))
    }

    @Test("writer and parser round-trip, escaping control characters")
    func roundTrip() throws {
        let value = JSONValue.object([
            "s": .string("q\"\\\n\t\u{01}é"), "n": .number("1.50"), "a": .array([.null, .bool(false)]),
        ])
        let text = JSONWriter.string(value)
        #expect(text == #"{"a":[null,false],"n":1.50,"s":"q\"\\\n\t\u0001é"}"#)
        #expect(try JSONParser.parse(Array(text.utf8)) == value)
    }

    @Test("the writer orders keys as Codec does: by UTF-8 bytes, also for keys not in NFC")
    func keyOrder() throws {
        // "e" + a combining acute accent sorts after "é" (U+00E9) as text, before it as bytes (0x65 < 0xC3).
        let keys = ["é", "e\u{301}x", "z", "a"]
        let value = JSONValue.object(Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.null) }))
        // Bytes compared, not strings: `String`'s == treats canonically equivalent text as equal.
        #expect(JSONWriter.bytes(value) == Array(#"{"a":null,"e\#u{301}x":null,"z":null,"é":null}"#.utf8))
        let encoded = try Codec.encode(Dictionary(uniqueKeysWithValues: keys.map { ($0, 0) }))
        #expect(encoded == Array(#"{"a":0,"e\#u{301}x":0,"z":0,"é":0}"#.utf8))
    }
}
