import Foundation

/// A multipart/form-data body (RFC 7578, framed as RFC 2046 §5.1.1 says) as named parts.
///
/// Parsed here in a page of code rather than by multipart-kit, which pulled all of swift-collections (rope, hash
/// trees, bit sets: 250 files) into every debug build for this one form.
struct MultipartForm {
    struct Part {
        var headers: [(name: String, value: String)] = []
        var body: ArraySlice<UInt8> = []
        var text: String? { String(validating: body, as: UTF8.self) }

        var name: String? {
            guard let disposition = headers.first(where: { $0.name.lowercased() == "content-disposition" })?.value else { return nil }
            return MultipartForm.parameter("name", in: disposition)
        }
    }

    struct MalformedBody: Error, CustomStringConvertible {
        let description: String
    }

    /// A form has a few fields and a photo; more parts than this is not a form this backend reads.
    static let maxParts = 64

    /// The first part of each name.
    private(set) var parts: [String: Part] = [:]

    init(_ body: [UInt8], boundary: String) throws {
        // RFC 2046: 1 to 70 characters, none of them a line break (which would make the delimiter unfindable).
        guard (1...70).contains(boundary.utf8.count), !boundary.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            throw MalformedBody(description: "the boundary must be 1 to 70 characters")
        }
        let dashes = Array("--".utf8), crlf = Array("\r\n".utf8)
        let delimiter = dashes + Array(boundary.utf8)
        // The first delimiter opens the body or ends the preamble's last line.
        var position: Int
        if body.starts(with: delimiter) {
            position = delimiter.count
        } else if let found = Self.find(crlf + delimiter, in: body, from: 0) {
            position = found + crlf.count + delimiter.count
        } else {
            throw MalformedBody(description: "no delimiter")
        }
        var count = 0
        while true {
            if body[position...].starts(with: dashes) { break }  // the close delimiter; the epilogue is ignored
            while position < body.count, body[position] == UInt8(ascii: " ") || body[position] == UInt8(ascii: "\t") { position += 1 }
            guard body[position...].starts(with: crlf) else { throw MalformedBody(description: "a delimiter not followed by a line break") }
            position += crlf.count
            count += 1
            guard count <= Self.maxParts else { throw MalformedBody(description: "more than \(Self.maxParts) parts") }
            var part = Part()
            // Header lines up to the empty line.
            while !body[position...].starts(with: crlf) {
                guard let end = Self.find(crlf, in: body, from: position) else { throw MalformedBody(description: "a header without its line break") }
                guard let line = String(validating: body[position..<end], as: UTF8.self), let colon = line.firstIndex(of: ":") else {
                    throw MalformedBody(description: "a header line without a colon")
                }
                part.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
                position = end + crlf.count
            }
            position += crlf.count
            guard let end = Self.find(crlf + delimiter, in: body, from: position) else {
                throw MalformedBody(description: "a part without its closing delimiter")
            }
            part.body = body[position..<end]
            if let name = part.name, parts[name] == nil { parts[name] = part }
            position = end + crlf.count + delimiter.count
        }
    }

    /// Where `needle` first starts in `bytes` at or after `start`.
    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        bytes[start...].firstRange(of: needle)?.lowerBound
    }

    /// The boundary parameter of a multipart Content-Type.
    static func boundary(contentType: String) -> String? {
        parameter("boundary", in: contentType)
    }

    /// A `key=value` or `key="value"` parameter of a header value.
    static func parameter(_ key: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == key else { continue }
            let value = pair[1]
            return value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 ? String(value.dropFirst().dropLast()) : value
        }
        return nil
    }
}
