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
    private var cursor: WireCursor
    private let fds: [UnixFD]

    /// Every argument of `message`, as its signature says.
    package static func values(of message: IncomingMessage) throws(DBusError) -> [DBusValue] {
        let header = message.header
        let read = message.bytes.withUnsafeBytes { all -> Result<[DBusValue], DBusError> in
            let bytes = UnsafeRawBufferPointer(rebasing: all[..<header.length])
            var reader = BodyReader(
                cursor: WireCursor(bytes, bigEndian: header.bigEndian, part: "body", offset: header.bodyOffset), fds: message.fds)
            do throws(DBusError) {
                var values: [DBusValue] = []
                for type in header.signature.completeTypes {
                    values.append(try reader.value(Substring(type.rawValue), depth: 0))
                }
                guard reader.cursor.isAtEnd else {
                    throw .inconsistentMessage("the body has \(bytes.count - reader.cursor.offset) bytes after its last argument")
                }
                return .success(values)
            } catch {
                return .failure(error)
            }
        }
        return try read.get()
    }

    // MARK: one value

    /// The value of the single complete type `type`.
    private mutating func value(_ type: Substring, depth: Int) throws(DBusError) -> DBusValue {
        guard let code = type.utf8.first else { throw .inconsistentMessage("an empty type") }
        switch code {
        case UInt8(ascii: "y"): return .byte(try cursor.fixed(UInt8.self))
        case UInt8(ascii: "b"):
            switch try cursor.fixed(UInt32.self) {
            case 0: return .bool(false)
            case 1: return .bool(true)
            case let other: throw .inconsistentMessage("a boolean is \(other), not 0 or 1")
            }
        case UInt8(ascii: "n"): return .int16(try cursor.fixed(Int16.self))
        case UInt8(ascii: "q"): return .uint16(try cursor.fixed(UInt16.self))
        case UInt8(ascii: "i"): return .int32(try cursor.fixed(Int32.self))
        case UInt8(ascii: "u"): return .uint32(try cursor.fixed(UInt32.self))
        case UInt8(ascii: "x"): return .int64(try cursor.fixed(Int64.self))
        case UInt8(ascii: "t"): return .uint64(try cursor.fixed(UInt64.self))
        case UInt8(ascii: "d"): return .double(Double(bitPattern: try cursor.fixed(UInt64.self)))
        case UInt8(ascii: "h"):
            let index = Int(try cursor.fixed(UInt32.self))
            guard index < fds.count else {
                throw .inconsistentMessage("file descriptor \(index) of a message that carries \(fds.count)")
            }
            return .unixFD(fds[index])
        case UInt8(ascii: "s"): return .string(try cursor.string())
        case UInt8(ascii: "o"): return .objectPath(try cursor.name(ObjectPath.self))
        case UInt8(ascii: "g"): return .signature(try cursor.name(Signature.self))
        case UInt8(ascii: "v"):
            let inner = try cursor.name(Signature.self)
            guard inner.completeTypes.count == 1 else {
                throw .inconsistentMessage("a variant holds '\(inner)', not one complete type")
            }
            return .variant(try value(Substring(inner.rawValue), depth: try deeper(depth)))
        case UInt8(ascii: "("):
            try cursor.align(8)
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
        let length = Int(try cursor.fixed(UInt32.self))
        guard length <= WireCursor.maximumArrayLength else { throw .inconsistentMessage("an array of \(length) bytes is longer than 64 MiB") }
        try cursor.align(Self.alignment(of: element))
        try cursor.need(length)
        let arrayEnd = cursor.offset + length
        if element.utf8.first == UInt8(ascii: "{") {
            let inner = element.dropFirst().dropLast()
            guard let keyEnd = Signature.endOfCompleteType(inner) else { throw .inconsistentMessage("a malformed dict entry type") }
            var entries: [DBusDictEntry] = []
            while cursor.offset < arrayEnd {
                try cursor.align(8)
                let key = try value(inner[..<keyEnd], depth: depth)
                let value = try value(inner[keyEnd...], depth: depth)
                entries.append(DBusDictEntry(key: key, value: value))
            }
            guard cursor.offset == arrayEnd else { throw .inconsistentMessage("an array's last element runs past its length") }
            return .dictionary(
                keyType: Signature(trusted: String(inner[..<keyEnd])), valueType: Signature(trusted: String(inner[keyEnd...])),
                entries)
        }
        var items: [DBusValue] = []
        while cursor.offset < arrayEnd { items.append(try value(element, depth: depth)) }
        guard cursor.offset == arrayEnd else { throw .inconsistentMessage("an array's last element runs past its length") }
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
}
