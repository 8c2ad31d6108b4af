/// Value syntaxes of the configuration file, following systemd's conventions so
/// that administrators can write what they already know.
enum ConfigValue {
    /// `yes/no`, `true/false`, `on/off`, `1/0`.
    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: return nil
        }
    }

    /// A non-negative decimal integer no larger than `maximum`.
    static func count(_ text: String, maximum: Int = Int(Int32.max)) -> Int? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(text), n <= maximum else {
            return nil
        }
        return n
    }

    /// A size in bytes, systemd's way: a number with an optional K, M, G or
    /// T (powers of 1024), or `infinity` (nil inside: no limit).
    static func bytes(_ text: String) -> UInt64?? {
        if text == "infinity" { return .some(nil) }
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = Substring(text)
        var unit: UInt64 = 1
        if let last = digits.last, let u = units[last] {
            unit = u
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = UInt64(digits) else { return nil }
        let (product, overflow) = n.multipliedReportingOverflow(by: unit)
        return overflow ? nil : .some(product)
    }
}
