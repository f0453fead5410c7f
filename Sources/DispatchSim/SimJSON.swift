import BackendContract
import Foundation
import CompressNIO
import Hummingbird
import NIOCore

/// One place for the reference backend's JSON: sorted keys, and request bodies decoded with errors that say
/// what was wrong.
enum SimJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        let data = try encoder.encode(value)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Reads at most `limit` bytes of body (413 beyond) and decodes it (400 with the decoder's reason).
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int = 64 * 1024) async throws -> T {
        let buffer = try await body(of: request, limit: limit)
        return try decode(type, from: Data(buffer.readableBytesView))
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw SimHTTPError(.badRequest, "invalid JSON body: \(describe(error))")
        } catch {
            throw SimHTTPError(.badRequest, "invalid JSON body")
        }
    }

    /// The request body, inflated when it came with `Content-Encoding: gzip`; `limit` holds for the body as
    /// the contract sees it (inflated).
    static func body(of request: Request, limit: Int) async throws -> ByteBuffer {
        do {
            var body = try await request.body.collect(upTo: limit)
            switch request.headers[.contentEncoding]?.lowercased() {
            case nil, "identity": return body
            case "gzip":
                do {
                    return try body.decompress(with: .gzip(), maxSize: limit)
                } catch let error as CompressNIOError where error == .bufferOverflow {
                    throw SimHTTPError(.payloadTooLarge, "the inflated body is over \(limit) bytes")
                } catch is CompressNIOError {
                    throw SimHTTPError(.badRequest, "the body is not valid gzip")
                }
            case let other?:
                throw SimHTTPError(.unsupportedMediaType, "Content-Encoding \(other) is not supported (gzip is)")
            }
        } catch is NIOTooManyBytesError {
            throw SimHTTPError(.payloadTooLarge, "the body is over \(limit) bytes")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "" : " at \(path)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \(key.stringValue)\(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}
