import DriverAPI
import SQLiteKit
import FoundationEssentials

/// A row of `remote_config`: a configuration document the fleet sent, as signed, and where it stands.
public struct RemoteConfigRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "remote_config"
    public static let primaryKey = ["version"]

    public enum State: String, Codable, Sendable {
        /// Accepted and being tried: it runs until a healthy run makes it good, or restarts give it up.
        case trial
        /// The last document that ran healthily: what a rollback returns to.
        case good
        /// An earlier good or trial document, replaced by a newer one.
        case superseded
        /// Given up after restarts without a healthy run.
        case failed
    }

    public var version: Int
    /// The document's JSON exactly as signed.
    public var payload: Data
    public var signature: String
    public var state: State
    public var receivedAt: Double
    /// The boot the trial's starts were counted in (`/proc/sys/kernel/random/boot_id`).
    public var bootId: String?
    /// The trial's starts, seconds since that boot (JSON array).
    public var starts: String

    enum CodingKeys: String, CodingKey {
        case version, payload, signature, state, starts
        case receivedAt = "received_at", bootId = "boot_id"
    }

    public init(version: Int, payload: Data, signature: String, state: State, receivedAt: Double) {
        self.version = version
        self.payload = payload
        self.signature = signature
        self.state = state
        self.receivedAt = receivedAt
        starts = "[]"
    }

    /// The trial's starts in `boot` (none when they were counted in another boot). Throws when the count cannot
    /// be read: a count read as none would never end a crash loop.
    public func starts(inBoot boot: String) throws -> [Double] {
        guard bootId == boot else { return [] }
        return try Codec.decode([Double].self, from: Data(starts.utf8))
    }
}

/// The remote configuration documents: each change in one durable transaction with the acknowledgement it
/// owes the fleet, so a power cut leaves the unit on the old document or the new one, never between.
public final class RemoteConfigBook: Sendable {
    public let store: Store

    public init(store: Store) { self.store = store }

    public struct Snapshot: Sendable, Equatable {
        public var good: RemoteConfigRecord?
        public var trial: RemoteConfigRecord?
        /// The newest version ever accepted (whatever became of it).
        public var newest: Int?
    }

    public func snapshot() throws -> Snapshot {
        try store.pool.read { db in
            Snapshot(
                good: try RemoteConfigRecord.fetchOne(db, "WHERE state = ?", arguments: [RemoteConfigRecord.State.good.rawValue]),
                trial: try RemoteConfigRecord.fetchOne(db, "WHERE state = ?", arguments: [RemoteConfigRecord.State.trial.rawValue]),
                newest: try db.value(Int.self, sql: "SELECT MAX(version) FROM remote_config"))
        }
    }

    /// The stored document of `version`, whatever became of it.
    public func record(version: Int) throws -> RemoteConfigRecord? {
        try store.pool.read { db in try RemoteConfigRecord.fetchOne(db, key: version) }
    }

    /// A checked document goes on trial, replacing an earlier trial.
    public func beginTrial(_ record: RemoteConfigRecord) throws {
        try store.writeDurably { db in
            try db.execute(sql: "UPDATE remote_config SET state = ? WHERE state = ?", arguments: [RemoteConfigRecord.State.superseded.rawValue, RemoteConfigRecord.State.trial.rawValue])
            var record = record
            record.state = .trial
            try record.insert(db)
        }
    }

    /// Counts a start of the trial, durably, before it is applied. Returns the earlier starts in this boot.
    public func recordStart(version: Int, boot: String, at now: Double) throws -> [Double] {
        try store.writeDurably { db in
            guard var record = try RemoteConfigRecord.fetchOne(db, key: version), record.state == .trial else { return [] }
            let earlier = try record.starts(inBoot: boot)
            record.bootId = boot
            record.starts = String(decoding: try Codec.encode(earlier + [now]), as: UTF8.self)
            try record.update(db)
            return earlier
        }
    }

    /// The trial ran healthily: it becomes the good one (the previous good one is superseded), with its ack.
    public func promote(version: Int, ack: OutboxItemRecord) throws {
        try store.writeDurably { db in
            try db.execute(sql: "UPDATE remote_config SET state = ? WHERE state = ?", arguments: [RemoteConfigRecord.State.superseded.rawValue, RemoteConfigRecord.State.good.rawValue])
            try db.execute(sql: "UPDATE remote_config SET state = ? WHERE version = ?", arguments: [RemoteConfigRecord.State.good.rawValue, version])
            try ack.insert(db)
        }
    }

    /// The trial is given up (the unit goes back to the good one), with its ack.
    public func giveUp(version: Int, ack: OutboxItemRecord) throws {
        try store.writeDurably { db in
            try db.execute(sql: "UPDATE remote_config SET state = ? WHERE version = ?", arguments: [RemoteConfigRecord.State.failed.rawValue, version])
            try ack.insert(db)
        }
    }
}
