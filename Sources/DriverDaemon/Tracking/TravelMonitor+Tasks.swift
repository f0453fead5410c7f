import DriverAPI
import DriverStore

/// Each task's odometer readings, from its acceptance to its end (delivered, or returned to the vendor): the
/// workflow commits a reading with the transition that makes it (one transaction) and notes it here; task views
/// show the distance since.
extension TravelMonitor {
    /// The reading a transition to `status` makes, or nil.
    func taskMark(for status: TaskStatus) -> TaskDistanceMark? {
        switch status {
        case .accepted: .started(metres: metres, vehicleKm: vehicleKm)
        case .delivered, .returnedToVendor: .ended(metres: metres, vehicleKm: vehicleKm)
        default: nil
        }
    }

    /// The reading committed with the transition, in memory too.
    func noteTaskMark(_ taskId: String, _ mark: TaskDistanceMark?) {
        taskReadings.withLock { readings in
            switch mark {
            case .started(let metres, let km):
                if readings[taskId] == nil { readings[taskId] = TaskReading(start: metres, vehicleStartKm: km) }
            case .ended(let metres, let km):
                if var reading = readings[taskId], reading.end == nil {
                    reading.end = metres
                    reading.vehicleEndKm = km
                    readings[taskId] = reading
                }
            case nil:
                break
            }
        }
    }

    /// Metres by GNSS (and by the vehicle's odometer, where it reports one) since the task was accepted, to its end.
    func taskDistance(_ taskId: String) -> (metres: Double, vehicleMetres: Double?)? {
        guard let reading = taskReadings.withLock({ $0[taskId] }) else { return nil }
        var vehicleMetres: Double?
        if let start = reading.vehicleStartKm, let end = reading.end == nil ? vehicleKm : reading.vehicleEndKm, end >= start {
            vehicleMetres = ((end - start) * 1000).rounded()
        }
        return (((reading.end ?? metres) - reading.start).rounded(), vehicleMetres)
    }
}
