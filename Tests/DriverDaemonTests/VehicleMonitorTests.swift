import BackendContract
import DriverAPI
@testable import DriverDaemon
import DriverDomain
import DriverStore
import Foundation
import Logging
import OBDKit
import Synchronization
import Testing

/// The vehicle monitor without the tracking pipeline: it hands the adapter's word in as vehicle events and reads only
/// what tracking decided (`VehicleTracking`), so a stand-in shows every decision it asks for.
@Suite("The vehicle monitor's events")
struct VehicleMonitorTests {
    /// Tracking as the monitor sees it: records the events handed in; the decisions are whatever the test sets.
    final class StandInTracking: VehicleTracking {
        let events = Mutex<[TrackingPipeline.VehicleEvent]>([])
        let decided = Mutex<(movement: Motion, ignition: Bool?)>((.stationary, nil))
        func vehicle(_ event: TrackingPipeline.VehicleEvent) { events.withLock { $0.append(event) } }
        func whenMotionChanged(_ action: @escaping @Sendable (Motion) -> Void) {}
        var movement: (motion: Motion, interval: Double) { (decided.withLock { $0.movement }, 1) }
        var ignition: Bool? { decided.withLock { $0.ignition } }
        func location(maxAge: Double) -> Location? { Location(lat: 52.5, lng: 13.4, accuracy: 5) }
    }

    @Test("the speed and the engine go to tracking as events; a battery low with the engine off for the hold time asks for protection once, and its recovery ends it")
    func eventsHandedIn() throws {
        let directory = NSTemporaryDirectory() + "vehicle-monitor-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let time = ManualTime()
        let clock = DaemonClock(time: time)
        let logger = Logger(label: "test")
        let tracking = StandInTracking()
        let monitor = VehicleMonitor(
            settings: .init(adapter: "192.168.0.10:35000", ignitionSource: .obd, lowVoltage: 11.8, lowVoltageSeconds: 60, shutdownOnLowVoltage: false),
            tracking: tracking, shift: Shift(unitState: UnitState(store: store), autoStart: false, clock: clock, logger: logger),
            outbox: Outbox(store: store), book: VehicleFaultBook(store: store), hub: EventHub(),
            travel: TravelMonitor(book: TravelBook(store: store), recorder: nil, idleSeconds: 300, shiftStartedAt: nil, logger: logger),
            clock: clock, logger: logger)
        monitor.handle(.link(.ok, detail: nil))
        monitor.handle(.reading(.rpm(1800)))
        monitor.handle(.reading(.speed(12)))
        let first = tracking.events.withLock { $0 }
        #expect(first.contains(.engine(running: true)))
        #expect(first.contains { if case .speed(12, _) = $0 { true } else { false } })
        // The engine stops; the battery sinks below 11.8 V and stays there past the hold time: protection, once.
        monitor.handle(.reading(.rpm(0)))
        tracking.events.withLock { $0 = [] }
        for _ in 0..<8 {
            monitor.handle(.reading(.voltage(11.5)))
            time.advance(by: 10)
        }
        #expect(tracking.events.withLock { $0 }.filter { $0 == .batteryProtection(true) }.count == 1)
        #expect(monitor.status().batteryProtectionSince != nil)
        // Recovered (charging): the protection ends.
        monitor.handle(.reading(.voltage(13.9)))
        time.advance(by: 10)
        monitor.handle(.reading(.voltage(13.9)))
        #expect(tracking.events.withLock { $0 }.last == .batteryProtection(false))
    }
}
