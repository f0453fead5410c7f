@testable import DispatchSim
import Testing

@Suite("dispatch-sim: the multipart/form-data parser")
struct MultipartFormTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A photo whose bytes hold line breaks, dashes and the boundary's text, none of them a delimiter (a line break,
    /// two dashes and the whole boundary).
    static let photo: [UInt8] = [0xFF, 0xD8, 0x0D, 0x0A, 0x2D, 0x2D] + bytes("b0undar\r\n-b0undary--\r\nx--b0undary\r\n") + [0xFF, 0xD9]

    @Test("a form as driverd sends it: fields, then a file whose bytes look like delimiters but are not")
    func driverdsForm() throws {
        let body = Self.bytes("--b0undary\r\nContent-Disposition: form-data; name=\"lat\"\r\n\r\n49.015\r\n")
            + Self.bytes("--b0undary\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"pod.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n")
            + Self.photo + Self.bytes("\r\n--b0undary--\r\n")
        let form = try MultipartForm(body, boundary: "b0undary")
        #expect(form.parts.keys.sorted() == ["lat", "photo"])
        #expect(form.parts["lat"]?.text == "49.015")
        #expect(Array(try #require(form.parts["photo"]).body) == Self.photo)
        #expect(form.parts["photo"]?.headers.map(\.name) == ["Content-Disposition", "Content-Type"])
        #expect(form.parts["photo"]?.headers.last?.value == "image/jpeg")
    }

    @Test("a preamble, padding after a delimiter, an empty part, an epilogue; the first part of a name counts")
    func framing() throws {
        let body = Self.bytes("ignored preamble\r\n--x  \t\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n")
            + Self.bytes("--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n2\r\n")
            + Self.bytes("--x\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n\r\n")
            + Self.bytes("--x\r\n\r\nno headers, no name\r\n--x--\r\nignored epilogue")
        let form = try MultipartForm(body, boundary: "x")
        #expect(form.parts["a"]?.text == "1")
        #expect(form.parts["empty"]?.text == "")
        #expect(form.parts.count == 2)
    }

    @Test("malformed bodies are refused with a reason, never read past their end", arguments: [
        ("no delimiter at all", "hello", "x"),
        ("a boundary mentioned mid-line is not a delimiter", "text --x\r\n\r\nbody --x--", "x"),
        ("a part that never ends", "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nbody", "x"),
        ("headers that never end", "--x\r\nContent-Disposition: form-data", "x"),
        ("a header without a colon", "--x\r\nno colon here\r\n\r\nbody\r\n--x--", "x"),
        ("a delimiter followed by text", "--xtra\r\n\r\nbody\r\n--x--", "x"),
        ("a body that stops after the delimiter", "--x", "x"),
        ("an empty boundary", "--\r\n\r\nbody\r\n----", ""),
        ("a boundary of 71 characters", "", String(repeating: "b", count: 71)),
    ])
    func malformed(_ reason: String, _ body: String, _ boundary: String) {
        #expect(throws: MultipartForm.MalformedBody.self, "\(reason)") { try MultipartForm(Self.bytes(body), boundary: boundary) }
    }

    @Test("a form of more parts than a form has is refused")
    func tooManyParts() {
        let part = "--x\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n"
        let body = Self.bytes(String(repeating: part, count: MultipartForm.maxParts + 1) + "--x--\r\n")
        #expect(throws: MultipartForm.MalformedBody.self) { try MultipartForm(body, boundary: "x") }
        let fits = Self.bytes(String(repeating: part, count: MultipartForm.maxParts) + "--x--\r\n")
        #expect(throws: Never.self) { try MultipartForm(fits, boundary: "x") }
    }
}
