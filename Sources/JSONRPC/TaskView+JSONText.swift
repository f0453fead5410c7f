import DriverAPI

/// A driver action's reply and its `task.changed` events, the backend's ack among them, are a task view: written
/// directly (`JSONDirectEncodable`), members in key order.
extension TaskView: JSONDirectEncodable {
    public func writeJSON(into output: inout [UInt8]) throws {
        try JSONObjectWriter.write(into: &output) { object in
            object.names("allowedActions", allowedActions)
            object.name("backendStatus", backendStatus)
            try object.number("distanceMeters", distanceMeters)
            object.name("failureReason", failureReason)
            object.string("id", id)
            object.name("pod", pod)
            object.string("podType", podType)
            object.name("primaryAction", primaryAction)
            object.name("status", status)
            try object.objects("stops", stops)
            object.name("sync", sync)
            try object.number("updatedAt", updatedAt)
        }
    }
}

extension StopView: JSONDirectEncodable {
    public func writeJSON(into output: inout [UInt8]) throws {
        try JSONObjectWriter.write(into: &output) { object in
            object.string("address", address)
            object.string("id", id)
            object.name("kind", kind)
            try object.number("lat", lat)
            try object.number("lng", lng)
            object.string("name", name)
            object.string("phone", phone)
            object.name("status", status)
            object.string("taskId", taskId)
        }
    }
}
