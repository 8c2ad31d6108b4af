/// A type signature: zero or more complete types (`a{sv}`, `ssos`, ``).
/// Validated with `dbus_signature_validate`.
package struct Signature: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules (`dbus_signature_validate`).
    package static func validate(_ string: String) -> DBusError? {
        guard let error = LibDBus.validateSignature(string) else { return nil }
        return .invalidArgs("invalid signature \"\(string)\": \(error.message)")
    }

    /// The empty signature (no arguments).
    package static let empty = Signature(trusted: "")
    /// `y`
    package static let byte = Signature(trusted: "y")
    /// `b`
    package static let bool = Signature(trusted: "b")
    /// `n`
    package static let int16 = Signature(trusted: "n")
    /// `q`
    package static let uint16 = Signature(trusted: "q")
    /// `i`
    package static let int32 = Signature(trusted: "i")
    /// `u`
    package static let uint32 = Signature(trusted: "u")
    /// `x`
    package static let int64 = Signature(trusted: "x")
    /// `t`
    package static let uint64 = Signature(trusted: "t")
    /// `d`
    package static let double = Signature(trusted: "d")
    /// `s`
    package static let string = Signature(trusted: "s")
    /// `o`
    package static let objectPath = Signature(trusted: "o")
    /// `g`
    package static let signature = Signature(trusted: "g")
    /// `h`
    package static let unixFD = Signature(trusted: "h")
    /// `v`
    package static let variant = Signature(trusted: "v")

    /// `a` + `element`; throws when the result nests too deep or is too long.
    package static func array(of element: Signature) throws(DBusError) -> Signature {
        try Signature("a" + element.rawValue)
    }

    /// `a{kv}`; the key must be a basic type.
    package static func dictionary(key: Signature, value: Signature) throws(DBusError) -> Signature {
        try Signature("a{" + key.rawValue + value.rawValue + "}")
    }

    /// `(...)` of the fields; at least one.
    package static func structure(_ fields: [Signature]) throws(DBusError) -> Signature {
        try Signature("(" + fields.map(\.rawValue).joined() + ")")
    }

    /// Concatenates signatures (an argument list).
    package static func + (lhs: Signature, rhs: Signature) -> Signature {
        Signature(trusted: lhs.rawValue + rhs.rawValue)
    }

    /// True when the signature is exactly one complete type (`dbus_signature_validate_single`).
    package var isSingleCompleteType: Bool {
        LibDBus.validateSingleSignature(rawValue) == nil
    }

    /// The complete types one after the other (`ssos` → `s`, `s`, `o`, `s`).
    package var completeTypes: [Signature] {
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
