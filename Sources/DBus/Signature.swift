/// A type signature: zero or more complete types (`a{sv}`, `ssos`, ``).
/// Validated with `dbus_signature_validate`.
public struct Signature: ValidatedName {
    public let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    public init(trusted: String) { rawValue = trusted }
    /// The specification's rules (`dbus_signature_validate`).
    public static func validate(_ string: String) -> DBusError? {
        guard let error = LibDBus.validateSignature(string) else { return nil }
        return .invalidArgs("invalid signature \"\(string)\": \(error.message)")
    }

    /// The empty signature (no arguments).
    public static let empty = Signature(trusted: "")
    /// `y`
    public static let byte = Signature(trusted: "y")
    /// `b`
    public static let bool = Signature(trusted: "b")
    /// `n`
    public static let int16 = Signature(trusted: "n")
    /// `q`
    public static let uint16 = Signature(trusted: "q")
    /// `i`
    public static let int32 = Signature(trusted: "i")
    /// `u`
    public static let uint32 = Signature(trusted: "u")
    /// `x`
    public static let int64 = Signature(trusted: "x")
    /// `t`
    public static let uint64 = Signature(trusted: "t")
    /// `d`
    public static let double = Signature(trusted: "d")
    /// `s`
    public static let string = Signature(trusted: "s")
    /// `o`
    public static let objectPath = Signature(trusted: "o")
    /// `g`
    public static let signature = Signature(trusted: "g")
    /// `h`
    public static let unixFD = Signature(trusted: "h")
    /// `v`
    public static let variant = Signature(trusted: "v")

    /// `a` + `element`; throws when the result nests too deep or is too long.
    public static func array(of element: Signature) throws(DBusError) -> Signature {
        try Signature("a" + element.rawValue)
    }

    /// `a{kv}`; the key must be a basic type.
    public static func dictionary(key: Signature, value: Signature) throws(DBusError) -> Signature {
        try Signature("a{" + key.rawValue + value.rawValue + "}")
    }

    /// `(...)` of the fields; at least one.
    public static func structure(_ fields: [Signature]) throws(DBusError) -> Signature {
        try Signature("(" + fields.map(\.rawValue).joined() + ")")
    }

    /// Concatenates signatures (an argument list).
    public static func + (lhs: Signature, rhs: Signature) -> Signature {
        Signature(trusted: lhs.rawValue + rhs.rawValue)
    }

    /// True when the signature is exactly one complete type (`dbus_signature_validate_single`).
    public var isSingleCompleteType: Bool {
        LibDBus.validateSingleSignature(rawValue) == nil
    }

    /// The complete types one after the other (`ssos` → `s`, `s`, `o`, `s`).
    public var completeTypes: [Signature] {
        var result: [Signature] = []
        var rest = Substring(rawValue)
        while let end = Signature.endOfCompleteType(rest) {
            result.append(Signature(trusted: String(rest[..<end])))
            rest = rest[end...]
        }
        return result
    }

    /// The index just past the first complete type of a valid signature.
    static func endOfCompleteType(_ s: Substring) -> Substring.Index? {
        guard let first = s.utf8.first else { return nil }
        var index = s.utf8.index(after: s.utf8.startIndex)
        switch first {
        case UInt8(ascii: "a"):
            return endOfCompleteType(s[index...])
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            var depth = 1
            while index < s.utf8.endIndex {
                let c = s.utf8[index]
                if c == UInt8(ascii: "(") || c == UInt8(ascii: "{") { depth += 1 }
                if c == UInt8(ascii: ")") || c == UInt8(ascii: "}") { depth -= 1 }
                index = s.utf8.index(after: index)
                if depth == 0 { return index }
            }
            return nil
        default:
            return index
        }
    }
}
