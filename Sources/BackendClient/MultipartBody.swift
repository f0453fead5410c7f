import FoundationEssentials
import NIOCore

/// A multipart/form-data body (RFC 7578): text fields, then one file.
struct MultipartBody {
    let boundary = "driverd-" + UUID().uuidString.lowercased()
    let data: Data

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    init(fields: [(name: String, value: String)], file: (name: String, filename: String, contentType: String, bytes: Data)) {
        var data = Data()
        for (name, value) in fields {
            data.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
        }
        let header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.name)\"; filename=\"\(file.filename)\"\r\n"
            + "Content-Type: \(file.contentType)\r\n\r\n"
        data.append(Data(header.utf8))
        data.append(file.bytes)
        data.append(Data("\r\n--\(boundary)--\r\n".utf8))
        self.data = data
    }
}

/// A request body handed to async-http-client chunk by chunk, reporting how much has gone out.
struct ChunkedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let data: Data
    let progress: @Sendable (Int, Int) -> Void
    static let chunkSize = 64 * 1024

    struct AsyncIterator: AsyncIteratorProtocol {
        let data: Data
        let progress: @Sendable (Int, Int) -> Void
        var offset = 0

        mutating func next() async -> ByteBuffer? {
            guard offset < data.count else { return nil }
            let end = Swift.min(data.count, offset + ChunkedBody.chunkSize)
            let chunk = ByteBuffer(bytes: data[data.startIndex + offset..<data.startIndex + end])
            offset = end
            progress(offset, data.count)
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(data: data, progress: progress) }
}
