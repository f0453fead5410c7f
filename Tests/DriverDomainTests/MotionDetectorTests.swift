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
        // Standing there, the centre (a median) follows; without a speed, a sustained displacement from it is
        // movement.
        #expect(detector.observe(Self.fix(11, north: 70, speed: nil)) == nil)
        #expect(detector.observe(Self.fix(12, north: 74, speed: nil)) == nil)
        #expect(detector.observe(Self.fix(13, north: 78, speed: nil)) == .changed(to: .moving))
    }

    @Test("the receiver's error estimate widens the radius")
    func errorEstimate() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0))
        for t in 1...5 { #expect(detector.observe(Self.fix(Double(t), north: 40, speed: nil, error: 30)) == nil) }
    }

    @Test("moving to stationary needs 65 s slow (a 60-s red light is not parking)")
    func stopping() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0, speed: 10))
        #expect(detector.observe(Self.fix(1, north: 10, speed: 0.1)) == nil)
        for t in 2...65 { #expect(detector.observe(Self.fix(Double(t), north: 12, speed: 0.2)) == nil) }
        #expect(detector.observe(Self.fix(66, north: 12, speed: 0.2)) == .changed(to: .stationary))
    }

    @Test("creeping for a second restarts the stationary window; a single fast reading does not")
    func stopWindowRestarts() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(0, speed: 10))
        _ = detector.observe(Self.fix(1, speed: 0.1))
        for t in 2...40 { _ = detector.observe(Self.fix(Double(t), speed: 0.1)) }
        // One Doppler outlier: the window goes on.
        _ = detector.observe(Self.fix(41, speed: 0.9))
        for t in 42...50 { _ = detector.observe(Self.fix(Double(t), speed: 0.1)) }
        // Creeping 5 m in two readings: the window starts again at 53.
        _ = detector.observe(Self.fix(51, north: 2, speed: 0.8))
        _ = detector.observe(Self.fix(52, north: 5, speed: 0.9))
        for t in 53...117 { #expect(detector.observe(Self.fix(Double(t), north: 5, speed: 0.1)) == nil, "t \(t)") }
        #expect(detector.observe(Self.fix(118, north: 5, speed: 0.1)) == .changed(to: .stationary))
        _ = detector.observe(Self.fix(119, speed: 3))
        _ = detector.observe(Self.fix(120, north: 40, speed: 3))
        #expect(detector.observe(Self.fix(121, north: 60, speed: 3)) == .changed(to: .moving))
    }

    @Test("time going backwards restarts the evidence windows instead of deciding on a negative span")
    func clockJump() {
        var detector = MotionDetector()
        _ = detector.observe(Self.fix(1000, speed: 10))
        _ = detector.observe(Self.fix(1001, speed: 0.1))
        // Jump back 52 minutes: the slow run must start again.
        let back = 1001.0 - 3120
        #expect(detector.observe(Self.fix(back, speed: 0.1)) == nil)
        for t in 1...64 { #expect(detector.observe(Self.fix(back + Double(t), speed: 0.1)) == nil) }
        #expect(detector.observe(Self.fix(back + 65, speed: 0.1)) == .changed(to: .stationary))
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
