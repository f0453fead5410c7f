import DriverAPI

/// Builders for the JSON-RPC 2.0 texts the daemon writes. Results arrive already encoded, so a response is
/// assembled without a second encoding pass.
public enum Envelope {
    public static func response(id: JSONValue, result: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(result.count + 48)
        out.append(contentsOf: #"{"jsonrpc":"2.0","result":"#.utf8)
        out.append(contentsOf: result)
        out.append(contentsOf: #","id":"#.utf8)
        JSONWriter.write(id, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    public static func error(id: JSONValue, _ error: WireError) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"jsonrpc":"2.0","error":"#.utf8)
        JSONWriter.write(error.json, into: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONWriter.write(id, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    public static func notification(method: String, params: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"jsonrpc":"2.0","method":"#.utf8)
        JSONText.writeString(method, into: &out)
        out.append(contentsOf: #","params":"#.utf8)
        out.append(contentsOf: params)
        out.append(UInt8(ascii: "}"))
        return out
    }

    public static func request(method: String, params: [UInt8]?, id: JSONValue?) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"jsonrpc":"2.0","method":"#.utf8)
        JSONText.writeString(method, into: &out)
        if let params {
            out.append(contentsOf: #","params":"#.utf8)
            out.append(contentsOf: params)
        }
        if let id {
            out.append(contentsOf: #","id":"#.utf8)
            JSONWriter.write(id, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `[a,b,c]` from already encoded elements.
    public static func batch(_ elements: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (position, element) in elements.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: element)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}
