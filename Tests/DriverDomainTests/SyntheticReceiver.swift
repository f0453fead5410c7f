#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain

/// A seeded receiver for table tests of pure logic: a true track along a line north, seen through gaussian
/// scatter, a slow random-walk drift, multipath spikes and Doppler speed noise, at 1 Hz or faster.
struct SyntheticReceiver {
    struct Noise {
        /// Standard deviation of the scatter per axis, metres.
        var sigma = 3.0
        /// Share of fixes thrown off by a multipath spike, and how far.
        var spikeShare = 0.0
        var spikeMetres: ClosedRange<Double> = 50...300
        /// Random-walk step of the scatter's centre per second, metres.
        var drift = 0.0
        /// The error estimate the receiver reports (nil: none).
        var eph: Double? = 17
        var dopplerSigma = 0.1
        /// Fixes per second.
        var hz = 1.0
    }

    enum Phase {
        case drive(speed: Double, seconds: Double)
        case stand(seconds: Double)
        /// Crawling in a queue: a speed drawn from the range, changed every few seconds.
        case creep(ClosedRange<Double>, seconds: Double)
        /// Speed changes linearly to `to` over the phase.
        case ramp(to: Double, seconds: Double)
    }

    struct Sample {
        var fix: Fix
        var truthNorth: Double
        var truthSpeed: Double
        var phase: Int
        var spike: Bool
    }

    static let origin = (lat: 52.52, lon: 13.405)

    static func run(_ phases: [Phase], noise: Noise, seed: UInt64, start: Double = 1_795_852_800) -> [Sample] {
        var random = SplitMix64(seed: seed)
        func gaussian() -> Double {
            let u1 = max(random.nextUnit(), 1e-12), u2 = random.nextUnit()
            return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
        }
        var samples: [Sample] = []
        var north = 0.0, speed = 0.0, time = start
        var driftNorth = 0.0, driftEast = 0.0
        let step = 1 / noise.hz
        for (index, phase) in phases.enumerated() {
            let seconds: Double
            var creepSpeed = 0.0, creepUntil = -1.0
            let startSpeed = speed
            switch phase {
            case .drive(let s, let d): (seconds, speed) = (d, s)
            case .stand(let d): (seconds, speed) = (d, 0)
            case .creep(_, let d): seconds = d
            case .ramp(_, let d): seconds = d
            }
            let ticks = Int((seconds * noise.hz).rounded())
            for tick in 0..<ticks {
                switch phase {
                case .creep(let range, _):
                    if time >= creepUntil {
                        creepSpeed = range.lowerBound + random.nextUnit() * (range.upperBound - range.lowerBound)
                        creepUntil = time + 3
                    }
                    speed = creepSpeed
                case .ramp(let to, _):
                    speed = startSpeed + (to - startSpeed) * Double(tick + 1) / Double(ticks)
                default: break
                }
                north += speed * step
                driftNorth += gaussian() * noise.drift * step.squareRoot()
                driftEast += gaussian() * noise.drift * step.squareRoot()
                var seenNorth = north + driftNorth + gaussian() * noise.sigma
                var seenEast = driftEast + gaussian() * noise.sigma
                let spike = random.nextUnit() < noise.spikeShare
                if spike {
                    let distance = noise.spikeMetres.lowerBound + random.nextUnit() * (noise.spikeMetres.upperBound - noise.spikeMetres.lowerBound)
                    let angle = random.nextUnit() * 2 * .pi
                    seenNorth += distance * cos(angle)
                    seenEast += distance * sin(angle)
                }
                let doppler = speed == 0 ? min(0.3, abs(gaussian()) * noise.dopplerSigma) : max(0, speed + gaussian() * noise.dopplerSigma)
                let fix = Fix(
                    time: time, latitude: origin.lat + seenNorth / 111_320,
                    longitude: origin.lon + seenEast / (111_320 * cos(origin.lat * .pi / 180)),
                    speed: doppler, track: 0, horizontalError: noise.eph, mode: 3)
                samples.append(Sample(fix: fix, truthNorth: north, truthSpeed: speed, phase: index, spike: spike))
                time += step
            }
        }
        return samples
    }

    /// The samples the fix filter accepts, each with the motion detector's verdict after it: what the rules
    /// downstream of the filter see in the daemon.
    static func accepted(_ samples: [Sample]) -> [(sample: Sample, motion: Motion)] {
        var filter = FixFilter(), detector = MotionDetector()
        return samples.compactMap { sample in
            switch filter.evaluate(sample.fix) {
            case .accept, .reanchor: break
            case .duplicate, .reject: return nil
            }
            _ = detector.observe(sample.fix)
            return (sample, detector.gpsMotion)
        }
    }
}
