/// Durations of one kind of call, in nanoseconds.
struct Samples {
    private(set) var values: [UInt64] = []

    mutating func add(_ nanoseconds: UInt64) { values.append(nanoseconds) }

    var count: Int { values.count }

    /// The `q` quantile (nearest rank) in microseconds.
    func quantile(_ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((Double(sorted.count) * q).rounded(.up)) - 1
        return Double(sorted[min(max(rank, 0), sorted.count - 1)]) / 1000
    }

    var median: Double { quantile(0.5) }
    var p99: Double { quantile(0.99) }

    /// Mean in microseconds.
    var mean: Double {
        guard !values.isEmpty else { return 0 }
        return Double(values.reduce(0, +)) / Double(values.count) / 1000
    }

    /// Calls per second on one connection: the inverse of the mean.
    var throughput: Double { mean > 0 ? 1_000_000 / mean : 0 }
}

/// Text formatting without Foundation: fixed decimals, padding.
enum Format {
    /// `x` with `decimals` decimals.
    static func fixed(_ x: Double, _ decimals: Int = 1) -> String {
        guard x.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((abs(x) * scale).rounded())
        let whole = scaled / Int(scale)
        var text = (x < 0 && scaled != 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let fraction = String(scaled % Int(scale))
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return text
    }

    /// A whole number with thin thousands separators (`,`).
    static func grouped(_ n: Int) -> String {
        let digits = String(abs(n))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    static func left(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    static func right(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}

/// A small deterministic generator (SplitMix64), so a seed repeats a run's choices.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
