import MultipartKit
import NIOCore

/// A multipart/form-data body as named parts (MultipartKit's streaming parser does the parsing).
struct MultipartForm {
    struct Part {
        var headers: [(String, String)] = []
        var body = ByteBuffer()
        var text: String? { body.getString(at: body.readerIndex, length: body.readableBytes) }

        var name: String? {
            guard let disposition = headers.first(where: { $0.0.lowercased() == "content-disposition" })?.1 else { return nil }
            return MultipartForm.parameter("name", in: disposition)
        }
    }

    /// The first part of each name.
    private(set) var parts: [String: Part] = [:]

    init(_ body: ByteBuffer, boundary: String) throws {
        let parser = MultipartParser(boundary: boundary)
        var current = Part()
        var collected: [Part] = []
        parser.onHeader = { field, value in current.headers.append((field, value)) }
        parser.onBody = { chunk in current.body.writeBuffer(&chunk) }
        parser.onPartComplete = {
            collected.append(current)
            current = Part()
        }
        try parser.execute(body)
        for part in collected {
            if let name = part.name, parts[name] == nil { parts[name] = part }
        }
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
