/// Idempotency keys as the backend contract defines them: a replayed key returns the first answer and
/// changes nothing; the same key with a different body is refused. Every final answer is remembered, a
/// refusal too, so a client whose answer was lost hears the same thing again.
public struct IdempotencyLedger<Response: Codable & Sendable & Equatable>: Codable, Sendable {
    public enum Check: Equatable, Sendable {
        case new
        case replay(Response)
        /// The key was used with another body (HTTP 422).
        case conflict
    }

    private struct Entry: Codable, Sendable {
        var digest: String
        var response: Response
    }

    private var entries: [String: Entry] = [:]

    public init() {}

    public func check(key: String, bodyDigest: String) -> Check {
        guard let entry = entries[key] else { return .new }
        return entry.digest == bodyDigest ? .replay(entry.response) : .conflict
    }

    /// Remembers the first answer for `key`; a second record for the same key is ignored.
    public mutating func record(key: String, bodyDigest: String, response: Response) {
        if entries[key] == nil { entries[key] = Entry(digest: bodyDigest, response: response) }
    }

    public var count: Int { entries.count }
}
