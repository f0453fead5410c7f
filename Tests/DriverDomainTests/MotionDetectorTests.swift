import DriverAPI
import DriverDomain
import Testing

/// Every transition of the motion detector, with fixes as the clock.
@Suite("Motion detector")
struct MotionDetectorTests {
    static let origin = (lat: 52.52, lon: 13.405)

    /// A fix `north` metres north of the origin at time `t`.
    static func fix(_ t: Double, north: Double = 0, speed: Double? = 0, error: Double? = nil) -> Fix {
        Fix(time: t, latitude: origin.lat + north / 111_320, longitude: origin.lon, speed: speed, horizontalError: error)
    }

    @Test("the first fix decides: slow means stationary, fast means moving")
    func firstFix() {
        var slow = MotionDetector()
        #expect(slow.motion == .unknown)
        #expect(slow.observe(Self.fix(0, speed: 0.2)) == .changed(to: .stationary))
        var fast = MotionDetector()
        #expect(fast.observe(Self.fix(0, speed: 5)) == .changed(to: .moving))
    }

    @Test("stationary to moving needs speed sustained for the confirmation time")
    func sustainedSpeed() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0))
        #expect(!detector.isConfirmingMovement)
        #expect(detector.observe(Self.fix(1, speed: 1.8)) == nil)  // one spike: not yet
        #expect(detector.isConfirmingMovement)
        #expect(detector.observe(Self.fix(2, speed: 1.9)) == nil)
        #expect(detector.observe(Self.fix(3, north: 5, speed: 2.0)) == .changed(to: .moving))
        #expect(!detector.isConfirmingMovement)
    }

    @Test("a single jitter spike never flips the mode")
    func jitterSpike() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0))
        for t in 1...200 {
            let speed = t % 50 == 0 ? 1.73 : 0.3
            #expect(detector.observe(Self.fix(Double(t), north: Double(t % 7), speed: speed)) == nil)
        }
        #expect(detector.motion == .stationary)
    }

    @Test("displacement past 25 m counts as moving evidence unless the receiver reports standing still")
    func displacement() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0))
        // A fix regained 37 m away while reporting speed 0: not movement.
        for t in 1...10 { #expect(detector.observe(Self.fix(Double(t), north: 37, speed: 0)) == nil) }
        // Without a speed, a sustained displacement is movement.
        #expect(detector.observe(Self.fix(11, north: 40, speed: nil)) == nil)
        #expect(detector.observe(Self.fix(12, north: 44, speed: nil)) == nil)
        #expect(detector.observe(Self.fix(13, north: 48, speed: nil)) == .changed(to: .moving))
    }

    @Test("the receiver's error estimate widens the radius")
    func errorEstimate() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0))
        for t in 1...5 { #expect(detector.observe(Self.fix(Double(t), north: 40, speed: nil, error: 30)) == nil) }
    }

    @Test("moving to stationary needs 60 s slow within 15 m")
    func stopping() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0, speed: 10))
        #expect(detector.observe(Self.fix(1, north: 10, speed: 0.1)) == nil)
        for t in 2...60 { #expect(detector.observe(Self.fix(Double(t), north: 12, speed: 0.2)) == nil) }
        #expect(detector.observe(Self.fix(61, north: 12, speed: 0.2)) == .changed(to: .stationary))
    }

    @Test("creeping out of the radius or speeding up restarts the stationary window")
    func stopWindowRestarts() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0, speed: 10))
        _ = detector.observe(Self.fix(1, speed: 0.1))
        for t in 2...40 { _ = detector.observe(Self.fix(Double(t), speed: 0.1)) }
        _ = detector.observe(Self.fix(41, north: 20, speed: 0.3))  // left the 15 m circle
        for t in 42...100 { #expect(detector.observe(Self.fix(Double(t), north: 20, speed: 0.1)) == nil) }
        #expect(detector.observe(Self.fix(101, north: 20, speed: 0.1)) == .changed(to: .stationary))
        _ = detector.observe(Self.fix(102, speed: 3))
        _ = detector.observe(Self.fix(103, north: 40, speed: 3))
        #expect(detector.observe(Self.fix(104, north: 60, speed: 3)) == .changed(to: .moving))
    }

    @Test("time going backwards restarts the evidence windows instead of deciding on a negative span")
    func clockJump() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(1000, speed: 10))
        _ = detector.observe(Self.fix(1001, speed: 0.1))
        // Jump back 52 minutes: the slow run must start again.
        #expect(detector.observe(Self.fix(1001 - 3120, speed: 0.1)) == nil)
        for t in 1...59 { #expect(detector.observe(Self.fix(1001 - 3120 + Double(t), speed: 0.1)) == nil) }
        #expect(detector.observe(Self.fix(1001 - 3120 + 60, speed: 0.1)) == .changed(to: .stationary))
    }

    @Test("ignition overrides GPS while present")
    func ignition() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0, speed: 10))
        #expect(detector.ignition(false) == .changed(to: .stationary))
        #expect(detector.observe(Self.fix(1, north: 10, speed: 10)) == nil)
        #expect(detector.motion == .stationary)
        #expect(detector.ignition(true) == .changed(to: .moving))
        #expect(detector.ignition(true) == nil)
        #expect(detector.ignition(nil) == nil)  // GPS says moving too
        #expect(detector.motion == .moving)
    }
}
