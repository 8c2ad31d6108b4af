/// Any D-Bus value, with the type information needed to write it back.
///
/// Containers carry their element types so that empty ones keep a signature:
/// an empty `as` and an empty `a{sv}` differ on the wire.
///
/// Deliberately not `CustomStringConvertible`: values may be secrets and must
/// not end up in a log line by accident.
package enum DBusValue: Sendable, Hashable {
    /// `y`
    case byte(UInt8)
    /// `b`
    case bool(Bool)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `d`
    case double(Double)
    /// `s`: valid UTF-8 without NUL characters.
    case string(String)
    /// `o`
    case objectPath(ObjectPath)
    /// `g`
    case signature(Signature)
    /// `h`: a file descriptor passed over the connection.
    case unixFD(UnixFD)
    /// `a…`: every element must have the type `elementType`.
    case array(elementType: Signature, [DBusValue])
    /// `a{kv}`: entries in wire order; keys must be of a basic type.
    case dictionary(keyType: Signature, valueType: Signature, [DBusDictEntry])
    /// `(…)`: one or more fields.
    indirect case structure([DBusValue])
    /// `v`: a value carrying its own type.
    indirect case variant(DBusValue)

    /// The D-Bus signature of this value (a single complete type).
    package var signature: Signature {
        switch self {
        case .array(let element, _): return Signature(trusted: "a" + element.rawValue)
        case .dictionary, .structure:
            var text = ""
            appendSignature(to: &text)
            return Signature(trusted: text)
        default:
            // Basic types and variants: a constant, no string building.
            return Self.basicSignatures[Int(typeCode)] ?? .variant
        }
    }

    private static let basicSignatures: [Int: Signature] = [
        Int(TypeCode.byte): .byte, Int(TypeCode.boolean): .bool, Int(TypeCode.int16): .int16,
        Int(TypeCode.uint16): .uint16, Int(TypeCode.int32): .int32, Int(TypeCode.uint32): .uint32,
        Int(TypeCode.int64): .int64, Int(TypeCode.uint64): .uint64, Int(TypeCode.double): .double,
        Int(TypeCode.string): .string, Int(TypeCode.objectPath): .objectPath, Int(TypeCode.signature): .signature,
        Int(TypeCode.unixFD): .unixFD, Int(TypeCode.variant): .variant,
    ]

    func appendSignature(to text: inout String) {
        switch self {
        case .byte: text += "y"
        case .bool: text += "b"
        case .int16: text += "n"
        case .uint16: text += "q"
        case .int32: text += "i"
        case .uint32: text += "u"
        case .int64: text += "x"
        case .uint64: text += "t"
        case .double: text += "d"
        case .string: text += "s"
        case .objectPath: text += "o"
        case .signature: text += "g"
        case .unixFD: text += "h"
        case .variant: text += "v"
        case .array(let element, _): text += "a" + element.rawValue
        case .dictionary(let key, let value, _): text += "a{" + key.rawValue + value.rawValue + "}"
        case .structure(let fields):
            text += "("
            for field in fields { field.appendSignature(to: &text) }
            text += ")"
        }
    }

    /// The type code an iterator reports for this value (`r` for structs).
    var typeCode: Int32 {
        switch self {
        case .byte: return TypeCode.byte
        case .bool: return TypeCode.boolean
        case .int16: return TypeCode.int16
        case .uint16: return TypeCode.uint16
        case .int32: return TypeCode.int32
        case .uint32: return TypeCode.uint32
        case .int64: return TypeCode.int64
        case .uint64: return TypeCode.uint64
        case .double: return TypeCode.double
        case .string: return TypeCode.string
        case .objectPath: return TypeCode.objectPath
        case .signature: return TypeCode.signature
        case .unixFD: return TypeCode.unixFD
        case .array, .dictionary: return TypeCode.array
        case .structure: return TypeCode.structure
        case .variant: return TypeCode.variant
        }
    }

    /// True when the value has exactly the type `signature`.
    package func hasType(_ signature: Signature) -> Bool {
        let raw = signature.rawValue.utf8
        // Basic types and variants: compare one code, no string building.
        if raw.count == 1, let code = raw.first {
            return typeCode == Int32(code) && !isContainerOtherThanVariant
        }
        // Containers: walk the signature's bytes along the value, without
        // building the value's signature (the writer checks every element of
        // every array it writes, so this must not allocate).
        var text = signature.rawValue
        return text.withUTF8 { bytes in
            var index = 0
            return matchesSignature(bytes, at: &index) && index == bytes.count
        }
    }

    /// True when the signature bytes from `index` start with this value's
    /// signature (what ``appendSignature(to:)`` writes); `index` moves past it.
    private func matchesSignature(_ bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) -> Bool {
        func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        func expect(_ text: String) -> Bool {
            for byte in text.utf8 where !expect(byte) { return false }
            return true
        }
        switch self {
        case .array(let element, _):
            return expect(UInt8(ascii: "a")) && expect(element.rawValue)
        case .dictionary(let key, let value, _):
            return expect(UInt8(ascii: "a")) && expect(UInt8(ascii: "{")) && expect(key.rawValue)
                && expect(value.rawValue) && expect(UInt8(ascii: "}"))
        case .structure(let fields):
            guard expect(UInt8(ascii: "(")) else { return false }
            for field in fields where !field.matchesSignature(bytes, at: &index) { return false }
            return expect(UInt8(ascii: ")"))
        default:
            // Basic types and variants: the type code is the signature's one letter.
            return expect(UInt8(truncatingIfNeeded: typeCode))
        }
    }

    private var isContainerOtherThanVariant: Bool {
        switch self {
        case .array, .dictionary, .structure: return true
        default: return false
        }
    }
}

/// One entry of a ``DBusValue/dictionary(keyType:valueType:_:)``.
package struct DBusDictEntry: Sendable, Hashable {
    /// The key, of a basic type.
    package var key: DBusValue
    /// The value.
    package var value: DBusValue

    /// An entry mapping `key` to `value`.
    package init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue: ExpressibleByStringLiteral {
    /// A string literal is a `.string`.
    package init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension DBusValue: ExpressibleByBooleanLiteral {
    /// A boolean literal is a `.bool`.
    package init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

// MARK: - building

extension DBusValue {
    /// `a{sv}` from a Swift dictionary, keys sorted so the wire form is stable.
    package static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .dictionary(
            keyType: .string, valueType: .variant,
            entries.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .string($0.key), value: .variant($0.value)) })
    }

    /// `a{ss}` from a Swift dictionary, keys sorted.
    package static func stringDictionary(_ entries: [String: String]) -> DBusValue {
        .dictionary(
            keyType: .string, valueType: .string,
            entries.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .string($0.key), value: .string($0.value)) })
    }

    /// `as`
    package static func strings(_ items: [String]) -> DBusValue {
        .array(elementType: .string, items.map { .string($0) })
    }

    /// `aa{sv}`
    package static func vardicts(_ items: [[String: DBusValue]]) -> DBusValue {
        .array(elementType: Signature(trusted: "a{sv}"), items.map { vardict($0) })
    }

    /// Any ``DBusRepresentable`` value.
    package init(_ value: some DBusRepresentable) {
        self = value.dbusValue
    }
}

// MARK: - reading

extension DBusValue {
    /// The string of a `.string` (not of an object path or signature).
    package var string: String? { if case .string(let v) = self { return v } else { return nil } }
    /// The flag of a `.bool`.
    package var bool: Bool? { if case .bool(let v) = self { return v } else { return nil } }
    /// The byte of a `.byte`.
    package var byte: UInt8? { if case .byte(let v) = self { return v } else { return nil } }
    /// The value of an `.int32`.
    package var int32: Int32? { if case .int32(let v) = self { return v } else { return nil } }
    /// The value of a `.uint32`.
    package var uint32: UInt32? { if case .uint32(let v) = self { return v } else { return nil } }
    /// The value of an `.int64`.
    package var int64: Int64? { if case .int64(let v) = self { return v } else { return nil } }
    /// The value of a `.uint64`.
    package var uint64: UInt64? { if case .uint64(let v) = self { return v } else { return nil } }
    /// The value of a `.double`.
    package var double: Double? { if case .double(let v) = self { return v } else { return nil } }
    /// The path of an `.objectPath`.
    package var objectPath: ObjectPath? { if case .objectPath(let v) = self { return v } else { return nil } }
    /// The inner value of a `.variant`.
    package var variantValue: DBusValue? { if case .variant(let v) = self { return v } else { return nil } }
    /// The fields of a `.structure`.
    package var fields: [DBusValue]? { if case .structure(let v) = self { return v } else { return nil } }

    /// Any integer type widened to `Int64`; nil for a `t` above `Int64.max`.
    package var integer: Int64? {
        switch self {
        case .byte(let v): return Int64(v)
        case .int16(let v): return Int64(v)
        case .uint16(let v): return Int64(v)
        case .int32(let v): return Int64(v)
        case .uint32(let v): return Int64(v)
        case .int64(let v): return v
        case .uint64(let v): return Int64(exactly: v)
        default: return nil
        }
    }

    /// The elements of an array (of any element type).
    package var elements: [DBusValue]? {
        if case .array(_, let items) = self { return items }
        return nil
    }

    /// The items of an `as`.
    package var strings: [String]? { decode([String].self) }

    /// An `a{sv}` as a Swift dictionary, values unwrapped from their variants.
    /// A key that appears twice keeps its last value.
    package var vardict: [String: DBusValue]? { decode([String: DBusValue].self) }

    /// An `aa{sv}` as Swift dictionaries.
    package var vardicts: [[String: DBusValue]]? { decode([[String: DBusValue]].self) }

    /// An `a{ss}` as a Swift dictionary.
    package var stringDictionary: [String: String]? { decode([String: String].self) }

    /// Converts to `T` when the value has exactly `T`'s D-Bus type.
    package func decode<T: DBusRepresentable>(_ type: T.Type = T.self) -> T? {
        T(dbusValue: self)
    }
}
