import DriverDomain

/// The world the reference backend starts with: drivers, their tasks and stops, OTPs. Loaded from JSON
/// (`dispatch-sim --scenario FILE`) or the built-in default, so the simulator alone is a usable world.
public struct Scenario: Codable, Sendable, Equatable {
    public struct Driver: Codable, Sendable, Equatable {
        public var id: String
        public var username: String
        public var password: String
    }

    public enum PODType: String, Codable, Sendable, Equatable {
        case photo = "PHOTO", otp = "OTP"
    }

    public struct Stop: Codable, Sendable, Equatable {
        public var address: String
        public var lat: Double
        public var lng: Double
        public var name: String
        public var phone: String
    }

    public struct Task: Codable, Sendable, Equatable {
        public var id: String
        public var driverId: String
        public var status: TaskStatus
        public var pickup: Stop
        public var dropoff: Stop
        public var podType: PODType
        /// The customer's code, for OTP tasks.
        public var otp: String?
    }

    public var drivers: [Driver]
    public var tasks: [Task]
    /// Speed for ETA estimates, metres per second.
    public var etaSpeed: Double
    /// Wrong OTP entries allowed before a task's OTP is locked.
    public var otpAttempts: Int

    /// A driver in Regensburg with two orders: one proved by OTP, one by photo. Demo credentials:
    /// `rider1` / `demo-password`.
    public static let builtIn = Scenario(
        drivers: [Driver(id: "drv-1", username: "rider1", password: "demo-password")],
        tasks: [
            Task(
                id: "task-1001", driverId: "drv-1", status: .assigned,
                pickup: Stop(address: "Haidplatz 8, Regensburg", lat: 49.02100, lng: 12.09700, name: "Pizzeria Da Marco", phone: "+49 941 000001"),
                dropoff: Stop(address: "Dachauplatz 4, Regensburg", lat: 49.01600, lng: 12.10050, name: "A. Customer", phone: "+49 151 0000001"),
                podType: .otp, otp: "4812"),
            Task(
                id: "task-1002", driverId: "drv-1", status: .assigned,
                pickup: Stop(address: "Neupfarrplatz 1, Regensburg", lat: 49.01890, lng: 12.09880, name: "Bäckerei Schmid", phone: "+49 941 000002"),
                dropoff: Stop(address: "Maximilianstraße 20, Regensburg", lat: 49.01500, lng: 12.09900, name: "B. Customer", phone: "+49 151 0000002"),
                podType: .photo, otp: nil),
        ],
        etaSpeed: 8, otpAttempts: 3)
}
