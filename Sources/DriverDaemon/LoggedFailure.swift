import DriverStore
import Logging

extension Logger {
    /// `body`'s value, or nil with the failure logged as an error naming `what`: for a read or write whose failure
    /// must not stop its caller (a housekeeping mark, a status line) but must be seen; never a silent `try?`.
    func valueOrLog<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            self.error("\(what()) failed: \(Store.describeWriteFailure(error))")
            return nil
        }
    }
}
