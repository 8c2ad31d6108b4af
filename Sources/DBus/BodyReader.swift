/// Reads the arguments of a received message from its body bytes, in
/// either byte order, checking as it reads what libdbus' loader checks
/// before it hands a message out (docs/performance.md, "the seventh round",
/// R2): alignment and zero padding, every length within the body, arrays of
/// at most 64 MiB that end exactly where their length says, strings in
/// UTF-8 without NUL, booleans 0 or 1, valid object paths and signatures,
/// variants holding one complete type, no more than
/// ``MessageReader/maximumDepth`` nested containers, file descriptor
/// indexes below the count the header gives, and no bytes after the last
/// argument. Anything else throws `InconsistentMessage`.
///
/// The second piece of flowd reading its own messages: the values of a
/// message the ``MessageFramer`` cut out, without libdbus loading it.
package struct BodyReader {
    private let bytes: [UInt8]
    /// Where the body starts in ``bytes``; alignment counts from there (the
    /// body starts 8-aligned in the message).
    private let start: Int
    private let end: Int
    private let bigEndian: Bool
    private let fds: [UnixFD]
    private var offset: Int

    /// A reader at the first argument of `message`.
    package init(_ message: IncomingMessage) {
        bytes = message.bytes
        start = message.header.bodyOffset
        end = message.header.length
        bigEndian = message.header.bigEndian
        fds = message.fds
        offset = start
    }

    /// Every argument of `message`, as its signature says.
    package static func values(of message: IncomingMessage) throws(DBusError) -> [DBusValue] {
        var reader = BodyReader(message)
        var values: [DBusValue] = []
        for type in message.header.signature.completeTypes {
            values.append(try reader.value(Substring(type.rawValue), depth: 0))
        }
        guard reader.offset == reader.end else {
            throw .inconsistentMessage("the body has \(reader.end - reader.offset) bytes after its last argument")
        }
        return values
    }

    // MARK: one value

    /// The value of the single complete type `type`.
    private mutating func value(_ type: Substring, depth: Int) throws(DBusError) -> DBusValue {
        guard let code = type.utf8.first else { throw .inconsistentMessage("an empty type") }
        switch code {
        case UInt8(ascii: "y"): return .byte(try fixed(UInt8.self))
        case UInt8(ascii: "b"):
            switch try fixed(UInt32.self) {
            case 0: return .bool(false)
            case 1: return .bool(true)
            case let other: throw .inconsistentMessage("a boolean is \(other), not 0 or 1")
            }
        case UInt8(ascii: "n"): return .int16(try fixed(Int16.self))
        case UInt8(ascii: "q"): return .uint16(try fixed(UInt16.self))
        case UInt8(ascii: "i"): return .int32(try fixed(Int32.self))
        case UInt8(ascii: "u"): return .uint32(try fixed(UInt32.self))
        case UInt8(ascii: "x"): return .int64(try fixed(Int64.self))
        case UInt8(ascii: "t"): return .uint64(try fixed(UInt64.self))
        case UInt8(ascii: "d"): return .double(Double(bitPattern: try fixed(UInt64.self)))
        case UInt8(ascii: "h"):
            let index = Int(try fixed(UInt32.self))
            guard index < fds.count else {
                throw .inconsistentMessage("file descriptor \(index) of a message that carries \(fds.count)")
            }
            return .unixFD(fds[index])
        case UInt8(ascii: "s"): return .string(try string(length: Int(try fixed(UInt32.self))))
        case UInt8(ascii: "o"): return .objectPath(try name(ObjectPath.self, length: Int(try fixed(UInt32.self))))
        case UInt8(ascii: "g"): return .signature(try name(Signature.self, length: Int(try fixed(UInt8.self))))
        case UInt8(ascii: "v"):
            let inner = try name(Signature.self, length: Int(try fixed(UInt8.self)))
            guard inner.completeTypes.count == 1 else {
                throw .inconsistentMessage("a variant holds '\(inner)', not one complete type")
            }
            return .variant(try value(Substring(inner.rawValue), depth: try deeper(depth)))
        case UInt8(ascii: "("):
            try align(8)
            var fields: [DBusValue] = []
            var rest = type.dropFirst().dropLast()
            while let fieldEnd = Signature.endOfCompleteType(rest) {
                fields.append(try value(rest[..<fieldEnd], depth: try deeper(depth)))
                rest = rest[fieldEnd...]
            }
            return .structure(fields)
        case UInt8(ascii: "a"):
            return try array(of: type.dropFirst(), depth: try deeper(depth))
        default:
            throw .inconsistentMessage("type '\(type)' cannot be read")
        }
    }

    private func deeper(_ depth: Int) throws(DBusError) -> Int {
        guard depth < MessageReader.maximumDepth else {
            throw .inconsistentMessage("values nested deeper than \(MessageReader.maximumDepth) containers")
        }
        return depth + 1
    }

    /// An array (or a dictionary, for `{…}` elements): its length, the
    /// padding to the first element (present even when there is none), and
    /// elements up to exactly the end the length gives.
    private mutating func array(of element: Substring, depth: Int) throws(DBusError) -> DBusValue {
        let length = Int(try fixed(UInt32.self))
        guard length <= 1 << 26 else { throw .inconsistentMessage("an array of \(length) bytes is longer than 64 MiB") }
        try align(Self.alignment(of: element))
        try need(length)
        let arrayEnd = offset + length
        if element.utf8.first == UInt8(ascii: "{") {
            let inner = element.dropFirst().dropLast()
            guard let keyEnd = Signature.endOfCompleteType(inner) else { throw .inconsistentMessage("a malformed dict entry type") }
            var entries: [DBusDictEntry] = []
            while offset < arrayEnd {
                try align(8)
                let key = try value(inner[..<keyEnd], depth: depth)
                let value = try value(inner[keyEnd...], depth: depth)
                entries.append(DBusDictEntry(key: key, value: value))
            }
            guard offset == arrayEnd else { throw .inconsistentMessage("an array's last element runs past its length") }
            return .dictionary(
                keyType: Signature(trusted: String(inner[..<keyEnd])), valueType: Signature(trusted: String(inner[keyEnd...])),
                entries)
        }
        var items: [DBusValue] = []
        while offset < arrayEnd { items.append(try value(element, depth: depth)) }
        guard offset == arrayEnd else { throw .inconsistentMessage("an array's last element runs past its length") }
        return .array(elementType: Signature(trusted: String(element)), items)
    }

    /// The alignment of a value of `type` on the wire.
    private static func alignment(of type: Substring) -> Int {
        switch type.utf8.first {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): return 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): return 8
        default: return 4
        }
    }

    // MARK: bytes

    private func need(_ count: Int) throws(DBusError) {
        guard count <= end - offset else { throw .inconsistentMessage("an argument runs past the end of the body") }
    }

    /// Skips the padding to `alignment` (counted from the body's start), which must be zero.
    private mutating func align(_ alignment: Int) throws(DBusError) {
        let padded = start + ((offset - start + alignment - 1) & ~(alignment - 1))
        try need(padded - offset)
        while offset < padded {
            guard bytes[offset] == 0 else { throw .inconsistentMessage("a padding byte in the body is not zero") }
            offset += 1
        }
    }

    private mutating func fixed<T: FixedWidthInteger>(_ type: T.Type) throws(DBusError) -> T {
        let size = MemoryLayout<T>.size
        try align(size)
        try need(size)
        let raw = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
        offset += size
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    /// `length` bytes, then a NUL; UTF-8 without a NUL inside.
    private mutating func string(length: Int) throws(DBusError) -> String {
        try need(length + 1)
        let text = bytes[offset..<(offset + length)]
        guard bytes[offset + length] == 0, !text.contains(0) else {
            throw .inconsistentMessage("a string is not terminated as its length says")
        }
        offset += length + 1
        guard let string = String(validating: text, as: UTF8.self) else {
            throw .inconsistentMessage("a string is not UTF-8")
        }
        return string
    }

    private mutating func name<Name: ValidatedName>(_ type: Name.Type, length: Int) throws(DBusError) -> Name {
        let raw = try string(length: length)
        if let error = Name.validate(raw) { throw .inconsistentMessage("an argument is invalid: \(error.message)") }
        return Name(trusted: raw)
    }
}
