import DriverAPI
import BackendContract
import DriverDomain

/// The world the reference backend starts with: drivers, their tasks and stops, OTPs. Loaded from JSON
/// (`dispatch-sim --scenario FILE`, see docs/dispatch-sim.md) or the built-in default, so the simulator alone
/// is a usable world.
public struct Scenario: Codable, Sendable, Equatable {
    public struct Driver: Codable, Sendable, Equatable {
        public var id: String
        public var username: String
        public var password: String
        /// The language of the driver's profile (a BCP 47 tag), sent with each login and refresh; none when absent.
        public var language: String?
        public init(id: String, username: String, password: String, language: String? = nil) {
            self.id = id
            self.username = username
            self.password = password
            self.language = language
        }
    }

    public struct Place: Codable, Sendable, Equatable {
        public var address: String
        public var lat: Double
        public var lng: Double
        public var name: String
        public var phone: String
        /// The stop's geofence, metres; `defaultGeofenceRadius` when absent.
        public var geofenceRadius: Double?
        public init(address: String, lat: Double, lng: Double, name: String, phone: String, geofenceRadius: Double? = nil) {
            self.address = address
            self.lat = lat
            self.lng = lng
            self.name = name
            self.phone = phone
            self.geofenceRadius = geofenceRadius
        }
    }

    /// The geofence a stop gets when its place names none, metres.
    public static let defaultGeofenceRadius = 100.0

    public struct Waypoint: Codable, Sendable, Equatable {
        public var lat: Double
        public var lng: Double
        public init(lat: Double, lng: Double) {
            self.lat = lat
            self.lng = lng
        }
    }

    public struct Task: Codable, Sendable, Equatable {
        public var id: String
        public var driverId: String
        public var status: TaskStatus
        public var pickup: Place
        public var dropoff: Place
        public var podType: PODType
        /// The customer's code, for OTP tasks.
        public var otp: String?
        /// Points between pickup and drop-off for the route line; a straight line without them.
        public var waypoints: [Waypoint]?

        public init(
            id: String, driverId: String, status: TaskStatus = .assigned, pickup: Place, dropoff: Place,
            podType: PODType, otp: String? = nil, waypoints: [Waypoint]? = nil
        ) {
            self.id = id
            self.driverId = driverId
            self.status = status
            self.pickup = pickup
            self.dropoff = dropoff
            self.podType = podType
            self.otp = otp
            self.waypoints = waypoints
        }

        private enum CodingKeys: String, CodingKey {
            case id, driverId, status, pickup, dropoff, podType, otp, waypoints
        }

        /// `status` may be left out (ASSIGNED).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                id: try c.decode(String.self, forKey: .id), driverId: try c.decode(String.self, forKey: .driverId),
                status: try c.decodeIfPresent(TaskStatus.self, forKey: .status) ?? .assigned,
                pickup: try c.decode(Place.self, forKey: .pickup), dropoff: try c.decode(Place.self, forKey: .dropoff),
                podType: try c.decode(PODType.self, forKey: .podType), otp: try c.decodeIfPresent(String.self, forKey: .otp),
                waypoints: try c.decodeIfPresent([Waypoint].self, forKey: .waypoints))
        }
    }

    public var drivers: [Driver]
    public var tasks: [Task]
    /// Stop order per driver id; by default each task's pickup then its drop-off, in task order.
    public var sequences: [String: [String]]
    /// Speed for ETA estimates, metres per second.
    public var etaSpeed: Double
    /// Wrong OTP entries allowed before a task's OTP is locked.
    public var otpAttempts: Int
    /// Least time between two ETA pushes to a driver, seconds.
    public var etaPushSeconds: Double

    public init(
        drivers: [Driver], tasks: [Task], sequences: [String: [String]] = [:], etaSpeed: Double = 8,
        otpAttempts: Int = 3, etaPushSeconds: Double = 30
    ) {
        self.drivers = drivers
        self.tasks = tasks
        self.sequences = sequences
        self.etaSpeed = etaSpeed
        self.otpAttempts = otpAttempts
        self.etaPushSeconds = etaPushSeconds
    }

    private enum CodingKeys: String, CodingKey {
        case drivers, tasks, sequences, etaSpeed, otpAttempts, etaPushSeconds
    }

    /// Only `drivers` and `tasks` are required in a scenario file.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            drivers: try container.decode([Driver].self, forKey: .drivers),
            tasks: try container.decode([Task].self, forKey: .tasks),
            sequences: try container.decodeIfPresent([String: [String]].self, forKey: .sequences) ?? [:],
            etaSpeed: try container.decodeIfPresent(Double.self, forKey: .etaSpeed) ?? 8,
            otpAttempts: try container.decodeIfPresent(Int.self, forKey: .otpAttempts) ?? 3,
            etaPushSeconds: try container.decodeIfPresent(Double.self, forKey: .etaPushSeconds) ?? 30)
    }

    /// What makes a scenario unusable, one line per problem; empty when it is fine.
    public func problems() -> [String] {
        var problems: [String] = []
        let driverIDs = Set(drivers.map(\.id))
        if drivers.isEmpty { problems.append("no drivers") }
        if driverIDs.count != drivers.count { problems.append("duplicate driver ids") }
        if Set(drivers.map(\.username)).count != drivers.count { problems.append("duplicate usernames") }
        for driver in drivers where !(driver.language.map(Self.isLanguageTag) ?? true) {
            problems.append("driver \(driver.id): language must be a BCP 47 tag such as \"pt\" or \"pt-BR\"")
        }
        var taskIDs = Set<String>()
        for task in tasks {
            if !BackendPaths.isValidTaskID(task.id) { problems.append("task id \(task.id): only letters, digits, '.', '_' and '-'") }
            if !taskIDs.insert(task.id).inserted { problems.append("task id \(task.id) used twice") }
            if !driverIDs.contains(task.driverId) { problems.append("task \(task.id): unknown driver \(task.driverId)") }
            if task.podType == .otp, !(task.otp.map(Self.isOTP) ?? false) { problems.append("task \(task.id): an OTP task needs a 4-digit otp") }
            for place in [task.pickup, task.dropoff] where !(-90...90).contains(place.lat) || !(-180...180).contains(place.lng) {
                problems.append("task \(task.id): coordinates out of range")
            }
            for place in [task.pickup, task.dropoff] where !(place.geofenceRadius.map { (10...5000).contains($0) } ?? true) {
                problems.append("task \(task.id): geofenceRadius must be 10 to 5000 metres")
            }
        }
        if !(etaSpeed > 0) { problems.append("etaSpeed must be above 0") }
        if otpAttempts < 1 { problems.append("otpAttempts must be at least 1") }
        return problems
    }

    /// A language and optional subtags (`pt`, `pt-BR`, `zh-Hant-TW`): letters and digits in parts of 1 to 8, the first 2 to 3 letters.
    static func isLanguageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    static func isOTP(_ value: String) -> Bool { value.utf8.count == 4 && value.utf8.allSatisfy { (48...57).contains($0) } }

    /// A driver in Regensburg with two orders, picked up one after the other and then delivered: one proved by
    /// OTP (4812), one by photo. Demo credentials: `rider1` / `demo-password`.
    public static let builtIn = Scenario(
        drivers: [Driver(id: "drv-1", username: "rider1", password: "demo-password")],
        tasks: [
            Task(
                id: "task-1001", driverId: "drv-1",
                pickup: Place(address: "Haidplatz 8, Regensburg", lat: 49.02100, lng: 12.09700, name: "Pizzeria Da Marco", phone: "+49 941 000001"),
                dropoff: Place(address: "Dachauplatz 4, Regensburg", lat: 49.01600, lng: 12.10050, name: "A. Customer", phone: "+49 151 0000001"),
                podType: .otp, otp: "4812"),
            Task(
                id: "task-1002", driverId: "drv-1",
                pickup: Place(address: "Neupfarrplatz 1, Regensburg", lat: 49.01890, lng: 12.09880, name: "Bäckerei Schmid", phone: "+49 941 000002"),
                dropoff: Place(address: "Maximilianstraße 20, Regensburg", lat: 49.01500, lng: 12.09900, name: "B. Customer", phone: "+49 151 0000002"),
                podType: .photo),
        ],
        sequences: ["drv-1": ["task-1001-pickup", "task-1002-pickup", "task-1001-dropoff", "task-1002-dropoff"]])
}
