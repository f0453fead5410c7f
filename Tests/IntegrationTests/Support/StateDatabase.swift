import GRDB

/// Reads a stopped (or running: WAL allows it) daemon's database, read-only, as an operator's tool would.
func readStateDatabase<T>(_ stateDirectory: String, _ body: (Database) throws -> T) throws -> T {
    var configuration = Configuration()
    configuration.readonly = true
    return try DatabaseQueue(path: stateDirectory + "/driverd.sqlite", configuration: configuration).read(body)
}
