import DriverAPI

extension RPCDispatcher {
    /// One call without a socket, as `RPCClient.call` makes it over one: the same request line, the same reply
    /// handling. For front ends and tests inside the daemon's process.
    public func call<Params, Result>(
        _ method: Method<Params, Result>, _ params: Params, as connection: RPCConnection
    ) async throws(RPCClient.Failure) -> Result {
        let id = JSONValue.number("1")
        let request = try RPCClient.request(method, params, id: id)
        guard let line = await handle(line: request, connection: connection) else { throw .malformedReply("no reply") }
        let reply: JSONValue
        do {
            reply = try JSONParser.parse(line)
        } catch {
            throw .malformedReply("\(error)")
        }
        return try RPCClient.result(of: reply, for: method, id: id)
    }
}

extension RPCConnection {
    /// The notifications queued for this connection, for an in-process front end (the server reads them for a
    /// socket's client).
    public func notificationLines() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        attach(.stream(continuation))
        return stream
    }
}
