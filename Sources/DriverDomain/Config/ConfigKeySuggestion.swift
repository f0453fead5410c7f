/// "Did you mean …?" for an unknown configuration key: the known key nearest by edit distance, if it is near.
public enum ConfigKeySuggestion {
    /// The closest known key within a third of the key's length in edits (at least 1, at most 4), or one
    /// with the same name in another section.
    public static func closest(to key: String, among known: [String]) -> String? {
        let typed = Array(key.lowercased().unicodeScalars)
        let limit = min(4, max(1, typed.count / 3))
        var best: (key: String, distance: Int)?
        for candidate in known {
            // The distance is at least the difference in length: most candidates need no table, and a long key none
            // (a file of thousands of long unknown keys once cost 100 ms a parse under the fuzzer, and grew with each).
            guard abs(candidate.unicodeScalars.count - typed.count) <= limit else { continue }
            let distance = editDistance(typed, Array(candidate.unicodeScalars))
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        if let best { return best.key }
        // `[gps] moving_hz` instead of `[sampling] moving_hz`: the right name in the wrong section.
        let name = "." + (key.split(separator: ".").last.map(String.init) ?? key)
        return known.first { $0.hasSuffix(name) }
    }

    /// Levenshtein distance.
    static func editDistance<Element: Equatable>(_ a: [Element], _ b: [Element]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
