/// The bytes of a received message as a ``Message`` holds them
/// (``Message/init(received:)``): the whole message, so that alignment
/// counts from its first byte, followed by the header's signature, so that
/// every signature a reader walks (the header's and those of variants in the
/// body) is a range of the same buffer. Owned by the message.
struct ReceivedBytes {
    /// The message, then its signature.
    let storage: UnsafeMutableRawBufferPointer
    /// The message's length: where the signature starts.
    let length: Int
    let bigEndian: Bool
    /// Where the body starts.
    let bodyOffset: Int

    /// A copy of `message`'s bytes and signature.
    init(_ message: IncomingMessage) {
        let header = message.header
        var signature = header.signature.rawValue
        length = header.length
        bigEndian = header.bigEndian
        bodyOffset = header.bodyOffset
        storage = .allocate(byteCount: length + signature.utf8.count, alignment: 8)
        message.bytes.withUnsafeBytes { bytes in
            storage.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<min(length, bytes.count)]))
        }
        // In one copy: walking the string's UTF-8 view byte by byte cost 0.3 k a message.
        let tail = UnsafeMutableRawBufferPointer(rebasing: storage[length...])
        signature.withUTF8 { if !$0.isEmpty { tail.copyMemory(from: UnsafeRawBufferPointer($0)) } }
    }

    func deallocate() { storage.deallocate() }

    /// The message's bytes, for a ``WireCursor``.
    var message: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<length]) }
    /// Where the header's signature is in ``storage``.
    var signature: Range<Int> { length..<storage.count }
}

/// Reads the arguments of a received message from its bytes, in either
/// byte order: the bytes side of ``MessageReader`` (docs/performance.md,
/// "the seventh round", R2, and "the eighth round", G1).
///
/// ``validate(_:fds:)`` first checks the whole body as libdbus' loader
/// checks it before it hands a message out: alignment and zero padding,
/// every length within the body, arrays of at most 64 MiB that end exactly
/// where their length says, strings in UTF-8 without NUL, booleans 0 or 1,
/// valid object paths and signatures, variants holding one complete type,
/// no more than ``MessageReader/maximumDepth`` nested containers, file
/// descriptor indexes below the count the header gives, and no bytes after
/// the last argument. Anything else throws `InconsistentMessage`, so a
/// message is refused as a whole, as libdbus refuses it, also when a
/// handler reads only its first argument. The typed reads then walk the
/// checked bytes; they still check every length against the message's end,
/// and throw `InconsistentMessage` rather than read outside it.
///
/// One reader is one container: the message's arguments, or the contents
/// of an array, struct, dict entry or variant.
struct BodyReader {
    /// The message's bytes; the cursor's offset is the next value's.
    private(set) var cursor: WireCursor
    /// Every signature (``ReceivedBytes/storage``).
    private let types: UnsafeRawBufferPointer
    /// This container's types, in ``types``.
    private let typesEnd: Int
    /// The type of the value at the cursor (for an array: its element type).
    private var type: Int
    /// An array's contents: its one element type, repeated until ``end``.
    private let isArray: Bool
    /// Where an array's contents end.
    private let end: Int
    /// How many file descriptors came with the message.
    let fdCount: Int

    private init(
        cursor: WireCursor, types: UnsafeRawBufferPointer, range: Range<Int>, isArray: Bool, end: Int, fdCount: Int
    ) {
        self.cursor = cursor
        self.types = types
        self.type = range.lowerBound
        self.typesEnd = range.upperBound
        self.isArray = isArray
        self.end = end
        self.fdCount = fdCount
    }

    /// A reader of the message's arguments; `fds` came with it.
    init(_ received: ReceivedBytes, fds: Int) {
        self.init(
            cursor: WireCursor(received.message, bigEndian: received.bigEndian, part: "body", offset: received.bodyOffset),
            types: UnsafeRawBufferPointer(received.storage), range: received.signature, isArray: false, end: received.length,
            fdCount: fds)
    }

    /// A reader of a container's contents, at the cursor's offset.
    private func inner(_ range: Range<Int>, arrayEnd: Int? = nil) -> BodyReader {
        BodyReader(cursor: cursor, types: types, range: range, isArray: arrayEnd != nil, end: arrayEnd ?? 0, fdCount: fdCount)
    }

    /// An empty reader, for a ``MessageReader`` that libdbus backs.
    static var none: BodyReader {
        BodyReader(
            cursor: WireCursor(UnsafeRawBufferPointer(start: nil, count: 0), bigEndian: false, part: "body"),
            types: UnsafeRawBufferPointer(start: nil, count: 0), range: 0..<0, isArray: false, end: 0, fdCount: 0)
    }

    // MARK: the current type

    /// The type code of the current value, as libdbus' iterators report it
    /// (`r` for a struct, `e` for a dict entry); ``TypeCode/invalid`` at the end.
    var currentType: Int32 {
        if isArray ? cursor.offset >= end : type >= typesEnd { return TypeCode.invalid }
        switch types[type] {
        case UInt8(ascii: "("): return TypeCode.structure
        case UInt8(ascii: "{"): return TypeCode.dictEntry
        case let code: return Int32(code)
        }
    }

    /// The signature bytes of the current value's complete type (empty at the end).
    var currentSignature: UnsafeRawBufferPointer {
        guard currentType != TypeCode.invalid else { return UnsafeRawBufferPointer(rebasing: types[0..<0]) }
        return UnsafeRawBufferPointer(rebasing: types[type..<endOfType(type)])
    }

    /// True when the current value's type is exactly `signature`.
    func currentTypeIs(_ signature: Signature) -> Bool {
        var signature = signature.rawValue
        return signature.withUTF8 { $0.elementsEqual(currentSignature) }
    }

    /// The index in ``types`` just past the complete type starting at `start`
    /// (signatures were validated, so every container closes).
    private func endOfType(_ start: Int) -> Int {
        var index = start
        var depth = 0
        while index < types.count {
            let code = types[index]
            index += 1
            switch code {
            case UInt8(ascii: "a"): continue
            case UInt8(ascii: "("), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
            if depth <= 0 { return index }
        }
        return index
    }

    /// Moves past the current value's type (the cursor is already past its bytes).
    private mutating func advanceType() {
        if !isArray { type = endOfType(type) }
    }

    // MARK: reading

    /// A fixed-size value of the current type.
    mutating func fixed<T: FixedBasic>(_: T.Type) throws(DBusError) -> T {
        let size = MemoryLayout<T>.size
        try cursor.align(size)
        try cursor.need(size)
        var value = T()
        let source = UnsafeRawBufferPointer(rebasing: cursor.bytes[cursor.offset..<(cursor.offset + size)])
        withUnsafeMutableBytes(of: &value) { target in
            if cursor.bigEndian {
                for index in 0..<size { target[index] = source[size - 1 - index] }
            } else {
                target.copyMemory(from: source)
            }
        }
        cursor.offset += size
        advanceType()
        return value
    }

    /// A boolean (0 or 1 on the wire).
    mutating func bool() throws(DBusError) -> Bool {
        let value = try cursor.uint32()
        guard value <= 1 else { throw .inconsistentMessage("a boolean is \(value), not 0 or 1") }
        advanceType()
        return value == 1
    }

    /// A string, object path (`s`, `o`: a 32-bit length) or signature (`g`: one byte).
    mutating func string() throws(DBusError) -> String {
        let text = types[type] == UInt8(ascii: "g") ? try cursor.signature() : try cursor.string()
        advanceType()
        return text
    }

    /// A file descriptor index (`h`), below the count that came with the message.
    mutating func fileDescriptorIndex() throws(DBusError) -> Int {
        let index = try checkedFileDescriptorIndex()
        advanceType()
        return index
    }

    private mutating func checkedFileDescriptorIndex() throws(DBusError) -> Int {
        let index = Int(try cursor.uint32())
        guard index < fdCount else { throw .inconsistentMessage("file descriptor \(index) of a message that carries \(fdCount)") }
        return index
    }

    /// The bytes of an `ay`.
    mutating func byteArray() throws(DBusError) -> [UInt8] {
        let length = Int(try cursor.uint32())
        try cursor.need(length)
        let bytes = Array(cursor.bytes[cursor.offset..<(cursor.offset + length)])
        cursor.offset += length
        advanceType()
        return bytes
    }

    /// A reader of the current container's contents; this reader moves past it.
    mutating func enterContainer() throws(DBusError) -> BodyReader {
        let start = type
        let typeEnd = endOfType(start)
        let inner: BodyReader
        switch types[start] {
        case UInt8(ascii: "a"):
            let length = Int(try cursor.uint32())
            try cursor.align(Self.alignment(of: types[start + 1]))
            try cursor.need(length)
            inner = self.inner((start + 1)..<typeEnd, arrayEnd: cursor.offset + length)
            cursor.offset += length
        case UInt8(ascii: "v"):
            let count = Int(try cursor.byte())
            let signatureStart = cursor.offset
            try cursor.need(count + 1)
            cursor.offset += count + 1
            inner = self.inner(signatureStart..<(signatureStart + count))
            try skip(signatureStart, depth: 0)
        default:  // a struct or a dict entry: its fields
            try cursor.align(8)
            inner = self.inner((start + 1)..<(typeEnd - 1))
            var field = start + 1
            while field < typeEnd - 1 {
                try skip(field, depth: 0)
                field = endOfType(field)
            }
        }
        advanceType()
        return inner
    }

    /// Moves past the current value (checked when the message was made).
    mutating func skipCurrent() throws(DBusError) {
        try skip(type, depth: 0)
        advanceType()
    }

    // MARK: walking

    /// Moves the cursor past a value of the complete type at `type` in
    /// ``types``, checking it as libdbus' loader does when `validating`
    /// (otherwise only that it stays within the message).
    private mutating func skip(_ type: Int, depth: Int, validating: Bool = false) throws(DBusError) {
        switch types[type] {
        case UInt8(ascii: "y"): _ = try cursor.byte()
        case UInt8(ascii: "b"):
            let value = try cursor.uint32()
            if value > 1 { throw .inconsistentMessage("a boolean is \(value), not 0 or 1") }
        case UInt8(ascii: "n"), UInt8(ascii: "q"): _ = try cursor.fixed(UInt16.self)
        case UInt8(ascii: "i"), UInt8(ascii: "u"): _ = try cursor.uint32()
        case UInt8(ascii: "h"): _ = try checkedFileDescriptorIndex()
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"): _ = try cursor.fixed(UInt64.self)
        case UInt8(ascii: "s"):
            if validating { try cursor.skipString() } else { cursor.offset += Int(try cursor.uint32()) + 1 }
        case UInt8(ascii: "o"):
            if validating { try cursor.skipName(ObjectPath.self) } else { cursor.offset += Int(try cursor.uint32()) + 1 }
        case UInt8(ascii: "g"):
            if validating { try cursor.skipName(Signature.self) } else { cursor.offset += Int(try cursor.byte()) + 1 }
        case UInt8(ascii: "v"):
            let inner: Int
            if validating {
                let signature = try cursor.nameBytes(Signature.self)
                inner = cursor.offset - 1 - signature.count
                guard !signature.isEmpty, endOfType(inner) == cursor.offset - 1 else {
                    throw .inconsistentMessage("a variant holds '\(String(decoding: signature, as: UTF8.self))', not one complete type")
                }
            } else {
                let count = Int(try cursor.byte())
                inner = cursor.offset
                cursor.offset += count + 1
            }
            try skip(inner, depth: try Self.deeper(depth), validating: validating)
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            try cursor.align(8)
            let fieldsEnd = endOfType(type) - 1
            var field = type + 1
            let inner = try Self.deeper(depth)
            while field < fieldsEnd {
                try skip(field, depth: inner, validating: validating)
                field = endOfType(field)
            }
        case UInt8(ascii: "a"):
            let length = Int(try cursor.uint32())
            guard length <= WireCursor.maximumArrayLength else {
                throw .inconsistentMessage("an array of \(length) bytes is longer than 64 MiB")
            }
            let element = type + 1
            try cursor.align(Self.alignment(of: types[element]))
            try cursor.need(length)
            let arrayEnd = cursor.offset + length
            guard validating else {
                cursor.offset = arrayEnd
                return
            }
            let inner = try Self.deeper(depth)
            // A dict entry counts no deeper than its array.
            let isDictionary = types[element] == UInt8(ascii: "{")
            while cursor.offset < arrayEnd {
                if isDictionary {
                    try cursor.align(8)
                    let key = element + 1
                    try skip(key, depth: inner, validating: true)
                    try skip(endOfType(key), depth: inner, validating: true)
                } else {
                    try skip(element, depth: inner, validating: true)
                }
            }
            guard cursor.offset == arrayEnd else { throw .inconsistentMessage("an array's last element runs past its length") }
        default:
            throw .inconsistentMessage("type '\(Character(Unicode.Scalar(types[type])))' cannot be read")
        }
        guard cursor.offset <= cursor.bytes.count else { throw .inconsistentMessage("a value runs past the end of the body") }
    }

    /// Checks every argument of `received`, and that nothing follows the
    /// last; `fds` is how many file descriptors came with the message.
    static func validate(_ received: ReceivedBytes, fds: Int) throws(DBusError) {
        var reader = BodyReader(received, fds: fds)
        while reader.type < reader.typesEnd {
            try reader.skip(reader.type, depth: 0, validating: true)
            reader.advanceType()
        }
        guard reader.cursor.isAtEnd else {
            throw .inconsistentMessage("the body has \(reader.cursor.bytes.count - reader.cursor.offset) bytes after its last argument")
        }
    }

    /// The nesting one level below `depth`, refused past ``MessageReader/maximumDepth``.
    private static func deeper(_ depth: Int) throws(DBusError) -> Int {
        guard depth < MessageReader.maximumDepth else {
            throw .inconsistentMessage("values nested deeper than \(MessageReader.maximumDepth) containers")
        }
        return depth + 1
    }

    /// The alignment of a value whose type starts with `code`.
    private static func alignment(of code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): return 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): return 8
        default: return 4
        }
    }
}
