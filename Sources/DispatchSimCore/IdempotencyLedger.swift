/// Idempotency keys as the backend contract defines them: a replayed key returns the first answer and
/// changes nothing; the same key with a different body is refused.
public struct IdempotencyLedger<Response: Sendable & Equatable>: Sendable {
    public enum Check: Equatable, Sendable {
        case new
        case replay(Response)
        /// The key was used with another body (HTTP 422).
        case conflict
    }

    private var entries: [String: (digest: String, response: Response)] = [:]

    public init() {}

    public func check(key: String, bodyDigest: String) -> Check {
        guard let entry = entries[key] else { return .new }
        return entry.digest == bodyDigest ? .replay(entry.response) : .conflict
    }

    /// Remembers the first answer for `key`; a second record for the same key is ignored.
    public mutating func record(key: String, bodyDigest: String, response: Response) {
        if entries[key] == nil { entries[key] = (bodyDigest, response) }
    }

    public var count: Int { entries.count }
}
