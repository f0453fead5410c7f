/// One row of a query's result: column names and values, in the query's order.
public struct Row: Sendable, Equatable {
    public let columns: [String]
    public let values: [DatabaseValue]

    /// The value of the first column named `column` (`.null` when there is none).
    public subscript(_ column: String) -> DatabaseValue {
        columns.firstIndex(of: column).map { values[$0] } ?? .null
    }

    /// The column's value as `Value`; nil when it is NULL, absent or of another type.
    public func value<Value: DatabaseValueConvertible>(_ column: String, as type: Value.Type = Value.self) -> Value? {
        Value(databaseValue: self[column])
    }
}
