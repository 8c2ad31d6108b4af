/// A type signature: zero or more complete types (`a{sv}`, `ssos`, ``).
/// Validated with `dbus_signature_validate`.
package struct Signature: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules (`dbus_signature_validate`). A signature
    /// ``isValid(_:)`` passes is valid without asking libdbus (whose call
    /// costs some 3 k instructions, a large part of reading a message's
    /// header); libdbus judges the rest and says what is wrong.
    package static func validate(_ string: String) -> DBusError? {
        guard let refusal = refusal(Self.self, "signature", string, LibDBus.validateSignature) else { return nil }
        return .invalidArgs("invalid signature \"\(string)\": \(refusal.reason)")
    }

    /// True when `bytes` are a valid signature by libdbus' rules
    /// (`_dbus_validate_signature_with_reason`): at most 255 bytes of known
    /// type codes; at most 32 `a` in a row, 32 nested structs and 32 nested
    /// dict entries; no empty struct; an array has an element type; a dict
    /// entry is an array's element with a basic key and exactly two types.
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= 255 else { return false }
        // How many complete types each open struct or dict entry (and the
        // top level, at 0) has so far.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 66) { counts in
            counts[0] = 0
            var top = 0
            var arrays = 0, structs = 0, entries = 0
            var last: UInt8 = 0
            for index in bytes.indices {
                let code = bytes[index]
                switch code {
                case UInt8(ascii: "a"):
                    arrays += 1
                    guard arrays <= 32 else { return false }
                case UInt8(ascii: "("):
                    structs += 1
                    guard structs <= 32 else { return false }
                    top += 1
                    counts[top] = 0
                case UInt8(ascii: ")"):
                    guard structs > 0, last != UInt8(ascii: "("), top > 0 else { return false }
                    top -= 1
                    structs -= 1
                case UInt8(ascii: "{"):
                    guard last == UInt8(ascii: "a") else { return false }
                    entries += 1
                    guard entries <= 32 else { return false }
                    top += 1
                    counts[top] = 0
                case UInt8(ascii: "}"):
                    guard entries > 0, top > 0, counts[top] == 2 else { return false }
                    top -= 1
                    entries -= 1
                default:
                    guard isBasic(code) || code == UInt8(ascii: "v") else { return false }
                }
                if code != UInt8(ascii: "a") && code != UInt8(ascii: "(") && code != UInt8(ascii: "{") { counts[top] += 1 }
                if arrays > 0 {
                    if code == UInt8(ascii: "a") {
                        let next = index + 1 < bytes.count ? bytes[index + 1] : 0
                        if next == UInt8(ascii: ")") || next == UInt8(ascii: "}") { return false }
                    } else {
                        arrays = 0
                    }
                }
                if last == UInt8(ascii: "{") && !isBasic(code) { return false }
                last = code
            }
            return arrays == 0 && structs == 0 && entries == 0
        }
    }

    /// A basic type's code: what a dictionary's key may be.
    private static func isBasic(_ code: UInt8) -> Bool {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"), UInt8(ascii: "u"),
            UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"),
            UInt8(ascii: "h"):
            return true
        default:
            return false
        }
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
