import DriverDomain

/// Google's encoded polyline format (precision 5), the usual way a backend sends a route line.
public enum Polyline {
    public typealias Point = GeoPoint

    public static func encode(_ points: [Point]) -> String {
        var output: [UInt8] = []
        var previous = (lat: 0, lng: 0)
        for point in points {
            let lat = Int((point.lat * 1e5).rounded()), lng = Int((point.lng * 1e5).rounded())
            append(lat - previous.lat, to: &output)
            append(lng - previous.lng, to: &output)
            previous = (lat, lng)
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// nil when `text` is not a well-formed polyline.
    public static func decode(_ text: String) -> [Point]? {
        let bytes = Array(text.utf8)
        var index = 0
        var lat = 0, lng = 0
        var points: [Point] = []
        while index < bytes.count {
            guard let dLat = next(bytes, &index), let dLng = next(bytes, &index) else { return nil }
            lat += dLat
            lng += dLng
            points.append(Point(lat: Double(lat) / 1e5, lng: Double(lng) / 1e5))
        }
        return points
    }

    private static func append(_ value: Int, to output: inout [UInt8]) {
        var v = value < 0 ? ~(value << 1) : value << 1
        while v >= 0x20 {
            output.append(UInt8((0x20 | (v & 0x1f)) + 63))
            v >>= 5
        }
        output.append(UInt8(v + 63))
    }

    private static func next(_ bytes: [UInt8], _ index: inout Int) -> Int? {
        var result = 0, shift = 0
        while index < bytes.count {
            let byte = Int(bytes[index]) - 63
            index += 1
            guard byte >= 0, byte < 64, shift < 60 else { return nil }
            result |= (byte & 0x1f) << shift
            shift += 5
            if byte < 0x20 { return (result & 1) != 0 ? ~(result >> 1) : result >> 1 }
        }
        return nil
    }
}
