/// A random (version 4) UUID, lowercase: the daemon's idempotency keys, batch ids and report ids.
///
/// FoundationEssentials' `UUID()` opens, reads and closes `/dev/urandom` for every one (three system calls; 27 µs
/// of a driver action's path to the backend under load); this is two `getrandom`s (the
/// standard library's generator), and the text is made lowercase as it is written.
enum RandomID {
    static func uuid() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: (UInt64, UInt64) = (generator.next(), generator.next())
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // the RFC 4122 variant
            return String(unsafeUninitializedCapacity: 36) { text in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    text[position] = hexDigits[Int(raw[index] >> 4)]
                    text[position + 1] = hexDigits[Int(raw[index] & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
