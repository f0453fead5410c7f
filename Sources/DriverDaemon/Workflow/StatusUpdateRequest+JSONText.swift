import BackendContract
import JSONRPC

/// A driver action's queued body, encoded before its commit on the way to the backend's ack: written directly
/// (`JSONDirectEncodable`, 22,000 instructions through `Encodable`), members in key order. `StatusUpdateTextTests`
/// compares it with Foundation's encoder.
extension StatusUpdateRequest: JSONDirectEncodable {
    public func writeJSON(into output: inout [UInt8]) throws {
        try JSONObjectWriter.write(into: &output) { object in
            try object.object("location", location)
            object.string("note", note)
            object.name("outsideReason", outsideReason)
            object.name("position", position)
            object.name("reason", reason)
            object.name("source", source)
            object.name("status", status)
            try object.number("stopDistance", stopDistance)
            object.name("timeSource", timeSource)
            try object.number("timestamp", timestamp)
        }
    }
}

extension Location: JSONDirectEncodable {
    public func writeJSON(into output: inout [UInt8]) throws {
        try JSONObjectWriter.write(into: &output) { object in
            try object.number("accuracy", accuracy)
            try object.number("lat", lat)
            try object.number("lng", lng)
        }
    }
}
