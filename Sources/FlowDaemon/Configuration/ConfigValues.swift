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
}
