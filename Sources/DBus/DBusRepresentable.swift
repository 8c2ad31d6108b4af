import FlowdSystem
/// A Swift type with a fixed D-Bus type, read from and written to messages
/// directly (no intermediate ``DBusValue`` for the common types).
///
/// Conforming: `UInt8` (`y`), `Bool` (`b`), `Int16` (`n`), `UInt16` (`q`),
/// `Int32` (`i`), `UInt32` (`u`), `Int64` (`x`), `UInt64` (`t`), `Double`
/// (`d`), `String` (`s`), ``ObjectPath`` (`o`), ``Signature`` (`g`),
/// ``UnixFD`` (`h`), ``DBusValue`` (**`v`**: a variant), arrays, dictionaries
/// with basic keys and ``DBusStruct``. So `[String: DBusValue]` is `a{sv}`,
/// `[[String: DBusValue]]` is `aa{sv}`, `[String: String]` is `a{ss}` and
/// `[DBusStruct<String, String, ObjectPath, String>]` is `a(ssos)`.
package protocol DBusRepresentable: Sendable {
    /// The D-Bus type of every value of this type.
    static var dbusSignature: Signature { get }
    /// Converts from a value of exactly this type; nil otherwise.
    init?(dbusValue: DBusValue)
    /// The value as a ``DBusValue``.
    var dbusValue: DBusValue { get }
    /// Reads a value at the reader's position, whose type was already checked.
    static func read(from reader: inout MessageReader) throws(DBusError) -> Self
    /// Appends the value.
    func write(to writer: inout MessageWriter) throws(DBusError)
}

extension DBusRepresentable {
    package static func read(from reader: inout MessageReader) throws(DBusError) -> Self {
        let value = try reader.nextValue()
        guard let converted = Self(dbusValue: value) else {
            throw .invalidArgs("expected \(dbusSignature), got \(value.signature)")
        }
        return converted
    }

    package func write(to writer: inout MessageWriter) throws(DBusError) {
        try writer.appendValue(dbusValue)
    }
}

/// A D-Bus basic type: the only kind allowed as a dictionary key.
package protocol DBusBasicType: DBusRepresentable, Hashable {}

/// Fixed-size basic types, read and written through `dbus_message_iter_get_basic`.
protocol FixedBasic: DBusBasicType {
    static var typeCode: Int32 { get }
    /// Zero, the value a read starts from.
    init()
}

extension FixedBasic {
    package static func read(from reader: inout MessageReader) throws(DBusError) -> Self {
        try reader.readFixed(Self.self)
    }

    package func write(to writer: inout MessageWriter) throws(DBusError) {
        writer.appendFixed(self)
    }
}

extension UInt8: FixedBasic {
    static var typeCode: Int32 { TypeCode.byte }
    package static var dbusSignature: Signature { .byte }
    package init?(dbusValue: DBusValue) { guard case .byte(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .byte(self) }
}

extension Int16: FixedBasic {
    static var typeCode: Int32 { TypeCode.int16 }
    package static var dbusSignature: Signature { .int16 }
    package init?(dbusValue: DBusValue) { guard case .int16(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .int16(self) }
}

extension UInt16: FixedBasic {
    static var typeCode: Int32 { TypeCode.uint16 }
    package static var dbusSignature: Signature { .uint16 }
    package init?(dbusValue: DBusValue) { guard case .uint16(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .uint16(self) }
}

extension Int32: FixedBasic {
    static var typeCode: Int32 { TypeCode.int32 }
    package static var dbusSignature: Signature { .int32 }
    package init?(dbusValue: DBusValue) { guard case .int32(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .int32(self) }
}

extension UInt32: FixedBasic {
    static var typeCode: Int32 { TypeCode.uint32 }
    package static var dbusSignature: Signature { .uint32 }
    package init?(dbusValue: DBusValue) { guard case .uint32(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .uint32(self) }
}

extension Int64: FixedBasic {
    static var typeCode: Int32 { TypeCode.int64 }
    package static var dbusSignature: Signature { .int64 }
    package init?(dbusValue: DBusValue) { guard case .int64(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .int64(self) }
}

extension UInt64: FixedBasic {
    static var typeCode: Int32 { TypeCode.uint64 }
    package static var dbusSignature: Signature { .uint64 }
    package init?(dbusValue: DBusValue) { guard case .uint64(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .uint64(self) }
}

extension Double: FixedBasic {
    static var typeCode: Int32 { TypeCode.double }
    package static var dbusSignature: Signature { .double }
    package init?(dbusValue: DBusValue) { guard case .double(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .double(self) }
}

extension Bool: DBusBasicType {
    package static var dbusSignature: Signature { .bool }
    package init?(dbusValue: DBusValue) { guard case .bool(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .bool(self) }
    package static func read(from reader: inout MessageReader) throws(DBusError) -> Bool { try reader.readBool() }
    package func write(to writer: inout MessageWriter) throws(DBusError) { writer.appendBool(self) }
}

extension String: DBusBasicType {
    package static var dbusSignature: Signature { .string }
    package init?(dbusValue: DBusValue) { guard case .string(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .string(self) }
    package static func read(from reader: inout MessageReader) throws(DBusError) -> String { try reader.readString() }
    package func write(to writer: inout MessageWriter) throws(DBusError) {
        try writer.appendString(self, type: TypeCode.string)
    }
}

extension ObjectPath: DBusBasicType {
    package static var dbusSignature: Signature { .objectPath }
    package init?(dbusValue: DBusValue) { guard case .objectPath(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .objectPath(self) }
    package static func read(from reader: inout MessageReader) throws(DBusError) -> ObjectPath {
        ObjectPath(trusted: try reader.readString())
    }
    package func write(to writer: inout MessageWriter) throws(DBusError) {
        try writer.appendString(rawValue, type: TypeCode.objectPath)
    }
}

extension Signature: DBusBasicType {
    package static var dbusSignature: Signature { .signature }
    package init?(dbusValue: DBusValue) { guard case .signature(let v) = dbusValue else { return nil }; self = v }
    package var dbusValue: DBusValue { .signature(self) }
    package static func read(from reader: inout MessageReader) throws(DBusError) -> Signature {
        Signature(trusted: try reader.readString())
    }
    package func write(to writer: inout MessageWriter) throws(DBusError) {
        try writer.appendString(rawValue, type: TypeCode.signature)
    }
}

extension UnixFD: DBusBasicType {
    package static var dbusSignature: Signature { .unixFD }
    /// A new owner of a duplicate of the value's descriptor; nil when it is
    /// not a `.unixFD` or the duplicate cannot be made.
    package convenience init?(dbusValue: DBusValue) {
        guard case .unixFD(let v) = dbusValue else { return nil }
        guard let copy = try? v.duplicate() else { return nil }
        self.init(owning: copy)
    }
    package var dbusValue: DBusValue { .unixFD(self) }
}

/// ``DBusValue`` as a typed value is a **variant** (`v`): reading unwraps one
/// variant, writing wraps the value in one. That is what makes
/// `[String: DBusValue]` mean `a{sv}`.
extension DBusValue: DBusRepresentable {
    package static var dbusSignature: Signature { .variant }
    package init?(dbusValue: DBusValue) {
        guard case .variant(let inner) = dbusValue else { return nil }
        self = inner
    }
    package var dbusValue: DBusValue { .variant(self) }
    package static func read(from reader: inout MessageReader) throws(DBusError) -> DBusValue {
        var inner = try reader.enterContainer()
        return try inner.nextValue()
    }
    package func write(to writer: inout MessageWriter) throws(DBusError) {
        try writer.appendValue(.variant(self))
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    package static var dbusSignature: Signature { Signature(trusted: "a" + Element.dbusSignature.rawValue) }

    package init?(dbusValue: DBusValue) {
        guard case .array(let type, let items) = dbusValue, type == Element.dbusSignature else { return nil }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard let element = Element(dbusValue: item) else { return nil }
            result.append(element)
        }
        self = result
    }

    package var dbusValue: DBusValue { .array(elementType: Element.dbusSignature, map(\.dbusValue)) }

    package static func read(from reader: inout MessageReader) throws(DBusError) -> [Element] {
        if Element.self == UInt8.self { return unsafeBitCast(try reader.readByteArray(), to: [Element].self) }
        var inner = try reader.enterContainer()
        var result: [Element] = []
        while !inner.isAtEnd { result.append(try Element.read(from: &inner)) }
        return result
    }

    package func write(to writer: inout MessageWriter) throws(DBusError) {
        // The element type decides, not a cast: an empty array of any type
        // casts to `[UInt8]` (and was written as `ay`).
        if Element.self == UInt8.self {
            writer.appendByteArray(unsafeBitCast(self, to: [UInt8].self))
            return
        }
        try writer.withContainer(TypeCode.array, contained: Element.dbusSignature.rawValue) { (inner) throws(DBusError) in
            for element in self { try element.write(to: &inner) }
        }
    }
}

extension Dictionary: DBusRepresentable where Key: DBusBasicType, Value: DBusRepresentable {
    package static var dbusSignature: Signature {
        Signature(trusted: "a{" + Key.dbusSignature.rawValue + Value.dbusSignature.rawValue + "}")
    }

    package init?(dbusValue: DBusValue) {
        guard case .dictionary(let keyType, let valueType, let entries) = dbusValue,
              keyType == Key.dbusSignature, valueType == Value.dbusSignature else { return nil }
        var result: [Key: Value] = [:]
        result.reserveCapacity(entries.count)
        for entry in entries {
            guard let key = Key(dbusValue: entry.key), let value = Value(dbusValue: entry.value) else { return nil }
            result[key] = value
        }
        self = result
    }

    package var dbusValue: DBusValue {
        .dictionary(
            keyType: Key.dbusSignature, valueType: Value.dbusSignature,
            map { DBusDictEntry(key: $0.key.dbusValue, value: $0.value.dbusValue) })
    }

    package static func read(from reader: inout MessageReader) throws(DBusError) -> [Key: Value] {
        // `a{sv}` and `a{ss}`, the dictionaries of most calls, without the
        // generic per-entry witness calls (this conformance is not
        // specialized for its callers in other modules). The types are the
        // same, checked just before: a bit cast, where `as?` would copy
        // entry by entry.
        if Key.self == String.self, Value.self == DBusValue.self {
            return unsafeBitCast(try reader.readVardict(), to: [Key: Value].self)
        }
        if Key.self == String.self, Value.self == String.self {
            return unsafeBitCast(try reader.readStringDictionary(), to: [Key: Value].self)
        }
        var entries = try reader.enterContainer()
        var result: [Key: Value] = [:]
        while !entries.isAtEnd {
            var entry = try entries.enterContainer()
            let key = try Key.read(from: &entry)
            if result.updateValue(try Value.read(from: &entry), forKey: key) != nil {
                throw MessageReader.duplicateKey(key)
            }
        }
        return result
    }

    package func write(to writer: inout MessageWriter) throws(DBusError) {
        if Key.self == String.self, Value.self == String.self {
            try writer.appendStringDictionary(unsafeBitCast(self, to: [String: String].self))
            return
        }
        let contained = "{" + Key.dbusSignature.rawValue + Value.dbusSignature.rawValue + "}"
        try writer.withContainer(TypeCode.array, contained: contained) { (entries) throws(DBusError) in
            for (key, value) in self {
                try entries.withContainer(TypeCode.dictEntry, contained: nil) { (entry) throws(DBusError) in
                    try key.write(to: &entry)
                    try value.write(to: &entry)
                }
            }
        }
    }
}

/// A D-Bus struct of typed fields: `DBusStruct<String, String, ObjectPath, String>`
/// is `(ssos)`. Read a list of them as `[DBusStruct<…>]` (`a(ssos)`).
package struct DBusStruct<each Field: DBusRepresentable>: DBusRepresentable {
    /// The fields in order.
    package var fields: (repeat each Field)

    /// A struct of `fields`.
    package init(_ fields: repeat each Field) {
        self.fields = (repeat each fields)
    }

    package static var dbusSignature: Signature {
        var text = "("
        for type in repeat (each Field).self { text += type.dbusSignature.rawValue }
        return Signature(trusted: text + ")")
    }

    package init?(dbusValue: DBusValue) {
        guard case .structure(let values) = dbusValue else { return nil }
        var iterator = values.makeIterator()
        do {
            let fields = (repeat try Self.convert((each Field).self, iterator.next()))
            guard iterator.next() == nil else { return nil }
            self.fields = fields
        } catch {
            return nil
        }
    }

    private struct Mismatch: Error {}

    private static func convert<T: DBusRepresentable>(_ type: T.Type, _ value: DBusValue?) throws(Mismatch) -> T {
        guard let value, let converted = T(dbusValue: value) else { throw Mismatch() }
        return converted
    }

    package var dbusValue: DBusValue {
        var values: [DBusValue] = []
        for field in repeat each fields { values.append(field.dbusValue) }
        return .structure(values)
    }

    package static func read(from reader: inout MessageReader) throws(DBusError) -> Self {
        var inner = try reader.enterContainer()
        let fields = (repeat try (each Field).read(from: &inner))
        let result = Self(repeat each fields)
        return result
    }

    package func write(to writer: inout MessageWriter) throws(DBusError) {
        try writer.withContainer(TypeCode.structure, contained: nil) { (inner) throws(DBusError) in
            for field in repeat each fields { try field.write(to: &inner) }
        }
    }
}
