import Synchronization

/// Writes message arguments straight into D-Bus wire format (little-endian),
/// for the replies and signals a service sends most often.
///
/// libdbus builds a message one iterator step at a time, and each step costs
/// about a thousand instructions (type checks against the signature being
/// built, a validation of every variant's signature, header updates); an
/// `a{sv}` entry takes six steps. This writes the same bytes directly, and
/// ``WireMessage`` puts a header in front of them for the socket, without
/// libdbus reading the message again (only debug builds do, as a check).
/// What libdbus would refuse (a NUL in a string, an array over the limit)
/// is refused here (``invalidity``).
///
/// The writer knows no types: callers write what their declared signature
/// says, and ``Message`` checks the result against it.
package struct WireEncoder {
    /// The bytes written so far; offset 0 is the start of the body, which
    /// is 8-aligned in the message, so alignment here is alignment there.
    package var bytes: [UInt8] {
        storage.withUnsafeMutablePointers { header, elements in
            Array(UnsafeBufferPointer(start: elements, count: header.pointee.count))
        }
    }

    /// How many bytes are written.
    package var count: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee.count } }

    /// Why the bytes are no valid D-Bus body, nil while they are. Checked as
    /// they are written (a NUL inside a string, an array over the 64 MiB the
    /// specification allows): flowd's own messages go to the socket without
    /// libdbus reading them again, and the bus disconnects a sender of an
    /// invalid message. Structure against the signature is the writer's
    /// part (see ``WireMessage``).
    package private(set) var invalidity: String?

    /// The count and the capacity of ``storage``.
    struct Extent {
        var count: Int
        let capacity: Int
    }

    /// The bytes, in a buffer of their own: writing one is a capacity check
    /// and a copy, where `Array.append(contentsOf:)` cost about a hundred
    /// instructions per call and a `GetStep` reply makes some 350 of them
    /// (docs/performance.md, "the sixth round"). Copied on write, as an
    /// array would be. Its header is read through pointers only: the
    /// `header` property is a class's stored property, and each access to
    /// it is checked for exclusivity at run time (about 80 instructions).
    private var storage: ManagedBuffer<Extent, UInt8>

    private static func storage(capacity: Int) -> ManagedBuffer<Extent, UInt8> {
        let capacity = Swift.max(capacity, 16)
        return ManagedBuffer<Extent, UInt8>.create(minimumCapacity: capacity) { _ in Extent(count: 0, capacity: capacity) }
    }

    /// An empty body, with room for a typical reply.
    package init() {
        self.init(capacity: 1024)
    }

    /// An empty encoder with room for `capacity` bytes.
    init(capacity: Int) {
        storage = Self.storage(capacity: capacity)
    }

    /// Makes room for `count` more bytes and hands `write` the first of
    /// them, uninitialized: it must write all `count`.
    @inline(__always)
    private mutating func append(_ count: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Void) {
        let fits = storage.withUnsafeMutablePointerToHeader { $0.pointee.count &+ count <= $0.pointee.capacity }
        if _slowPath(!fits || !isKnownUniquelyReferenced(&storage)) {
            reallocate(adding: count)
        }
        storage.withUnsafeMutablePointers { header, elements in
            write(elements + header.pointee.count)
            header.pointee.count &+= count
        }
    }

    /// A buffer of its own with room for `count` more bytes.
    private mutating func reallocate(adding count: Int) {
        let old = storage
        let (written, reserved) = old.withUnsafeMutablePointerToHeader { ($0.pointee.count, $0.pointee.capacity) }
        var capacity = reserved
        while capacity < written + count { capacity *= 2 }
        let new = Self.storage(capacity: capacity)
        old.withUnsafeMutablePointerToElements { from in
            new.withUnsafeMutablePointers { header, to in
                to.initialize(from: from, count: written)
                header.pointee.count = written
            }
        }
        storage = new
    }

    /// The zeros that pad `count` bytes to a multiple of `alignment`.
    @inline(__always)
    private static func padding(_ count: Int, _ alignment: Int) -> Int {
        (alignment &- (count & (alignment &- 1))) & (alignment &- 1)
    }

    /// Pads with zeros to a multiple of `alignment` (1, 2, 4 or 8).
    package mutating func align(_ alignment: Int) {
        let pad = Self.padding(count, alignment)
        if pad != 0 { append(pad) { Self.zero($0, pad) } }
    }

    /// Writes `count` (at most 7) padding zeros: a loop, not a `memset` call.
    @inline(__always)
    private static func zero(_ at: UnsafeMutablePointer<UInt8>, _ count: Int) {
        var index = 0
        while index < count {
            (at + index).initialize(to: 0)
            index &+= 1
        }
    }

    private mutating func raw<T: FixedWidthInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        let pad = Self.padding(count, size)
        append(pad + size) { at in
            Self.zero(at, pad)
            UnsafeMutableRawPointer(at + pad).storeBytes(of: value.littleEndian, as: T.self)
        }
    }

    /// `y`
    package mutating func byte(_ value: UInt8) { append(1) { $0.initialize(to: value) } }
    /// `b`
    package mutating func bool(_ value: Bool) { raw(UInt32(value ? 1 : 0)) }
    /// `n`
    package mutating func int16(_ value: Int16) { raw(value) }
    /// `q`
    package mutating func uint16(_ value: UInt16) { raw(value) }
    /// `i`
    package mutating func int32(_ value: Int32) { raw(value) }
    /// `u`
    package mutating func uint32(_ value: UInt32) { raw(value) }
    /// `x`
    package mutating func int64(_ value: Int64) { raw(value) }
    /// `t`
    package mutating func uint64(_ value: UInt64) { raw(value) }
    /// `d`
    package mutating func double(_ value: Double) { raw(value.bitPattern) }

    /// `s` and `o`: a 32-bit length, the UTF-8 bytes, a NUL.
    package mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: $0) }
    }

    /// `s` from bytes known at compile time (a key of an `a{sv}`).
    package mutating func string(_ value: StaticString) {
        value.withUTF8Buffer { string(utf8: $0) }
    }

    /// `s`: padding to 4, the length, the bytes, a NUL, in one reservation.
    private mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        let length = utf8.count
        let pad = Self.padding(count, 4)
        append(pad + 4 + length + 1) { at in
            Self.zero(at, pad)
            UnsafeMutableRawPointer(at + pad).storeBytes(of: UInt32(truncatingIfNeeded: length).littleEndian, as: UInt32.self)
            if let base = utf8.baseAddress { (at + pad + 4).initialize(from: base, count: length) }
            (at + pad + 4 + length).initialize(to: 0)
        }
        if Self.holdsNUL(utf8) { invalidity = invalidity ?? "a string holds a NUL character" }
    }

    /// True when `bytes` hold a zero byte: eight at a time (a word has a zero
    /// byte exactly when `(w - 0x01…01) & ~w & 0x80…80` is not zero).
    static func holdsNUL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index &+ 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { return true }
            index &+= 8
        }
        while index < bytes.count {
            if base[index] == 0 { return true }
            index &+= 1
        }
        return false
    }

    /// `g`: an 8-bit length, the bytes, a NUL.
    package mutating func signature(_ value: String) {
        var value = value
        value.withUTF8 { signature(utf8: $0) }
    }

    /// `g` from bytes known at compile time.
    package mutating func signature(_ value: StaticString) {
        value.withUTF8Buffer { signature(utf8: $0) }
    }

    private mutating func signature(utf8: UnsafeBufferPointer<UInt8>) {
        let length = utf8.count
        append(length + 2) { at in
            at.initialize(to: UInt8(truncatingIfNeeded: length))
            if let base = utf8.baseAddress { (at + 1).initialize(from: base, count: length) }
            (at + 1 + length).initialize(to: 0)
        }
    }

    /// Overwrites the 32-bit value at `offset` (an array's length, known
    /// once its elements are written).
    private mutating func patch(_ value: UInt32, at offset: Int) {
        if _slowPath(!isKnownUniquelyReferenced(&storage)) { reallocate(adding: 0) }
        storage.withUnsafeMutablePointerToElements { elements in
            UnsafeMutableRawPointer(elements + offset).storeBytes(of: value.littleEndian, as: UInt32.self)
        }
    }

    /// `a…`: the length, padding to the elements' alignment (also when there
    /// are none), the elements `body` writes, then the length filled in.
    package mutating func array(elementAlignment: Int, _ body: (inout WireEncoder) throws(DBusError) -> Void)
        throws(DBusError)
    {
        raw(UInt32(0))
        let lengthAt = count - 4
        align(elementAlignment)
        let start = count
        try body(&self)
        if count - start > Self.maximumArrayLength {
            invalidity = invalidity ?? "an array is longer than the 64 MiB D-Bus allows"
        }
        patch(UInt32(truncatingIfNeeded: count - start), at: lengthAt)
    }

    /// The longest array the specification allows, in bytes.
    static let maximumArrayLength = 1 << 26

    /// `(…)` and `{…}`: 8-aligned, then the fields `body` writes.
    package mutating func structure(_ body: (inout WireEncoder) throws(DBusError) -> Void) throws(DBusError) {
        align(8)
        try body(&self)
    }

    /// An `a{sv}` whose entries `body` writes with ``VardictWriter``.
    package mutating func vardict(_ body: (inout VardictWriter) throws(DBusError) -> Void) throws(DBusError) {
        try array(elementAlignment: 8) { (encoder) throws(DBusError) in
            // The bytes move into the writer and back: a copy would make
            // every append copy the whole array.
            var writer = VardictWriter(encoder: WireEncoder(capacity: 0))
            swap(&writer.encoder, &encoder)
            defer { swap(&writer.encoder, &encoder) }
            try body(&writer)
        }
    }

    /// An `a{ss}`, in the dictionary's order.
    package mutating func stringDictionary(_ dictionary: [String: String]) throws(DBusError) {
        try array(elementAlignment: 8) { (encoder) throws(DBusError) in
            for (key, value) in dictionary {
                encoder.align(8)
                encoder.string(key)
                encoder.string(value)
            }
        }
    }

    /// An `as`.
    package mutating func strings(_ values: [String]) throws(DBusError) {
        try array(elementAlignment: 4) { (encoder) throws(DBusError) in
            for value in values { encoder.string(value) }
        }
    }

    /// Any value as its own type, as ``MessageWriter/appendValue(_:)`` writes
    /// it. File descriptors travel beside the bytes, which this cannot do.
    package mutating func value(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .byte(let v): byte(v)
        case .bool(let v): bool(v)
        case .int16(let v): int16(v)
        case .uint16(let v): uint16(v)
        case .int32(let v): int32(v)
        case .uint32(let v): uint32(v)
        case .int64(let v): int64(v)
        case .uint64(let v): uint64(v)
        case .double(let v): double(v)
        case .string(let v): string(v)
        case .objectPath(let v): string(v.rawValue)
        case .signature(let v): signature(v.rawValue)
        case .unixFD: throw .invalidArgs("a file descriptor cannot be written into a prebuilt message")
        case .variant(let inner): try variant(inner)
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("a struct needs at least one field") }
            try structure { (encoder) throws(DBusError) in
                for field in fields { try encoder.value(field) }
            }
        case .array(let elementType, let items):
            for item in items where !item.hasType(elementType) {
                throw .invalidArgs("array of '\(elementType)' holds a '\(item.signature)'")
            }
            try array(elementAlignment: Self.alignment(of: elementType.rawValue)) { (encoder) throws(DBusError) in
                for item in items { try encoder.value(item) }
            }
        case .dictionary(let keyType, let valueType, let entries):
            for entry in entries {
                guard entry.key.hasType(keyType), entry.value.hasType(valueType) else {
                    throw .invalidArgs(
                        "dictionary of '\(keyType)' to '\(valueType)' holds '\(entry.key.signature)' to '\(entry.value.signature)'")
                }
            }
            try array(elementAlignment: 8) { (encoder) throws(DBusError) in
                for entry in entries {
                    encoder.align(8)
                    try encoder.value(entry.key)
                    try encoder.value(entry.value)
                }
            }
        }
    }

    /// `v`: the value's signature, then the value.
    package mutating func variant(_ inner: DBusValue) throws(DBusError) {
        switch inner {
        case .array, .dictionary, .structure:
            signature(inner.signature.rawValue)
        default:
            // A basic type or a variant: its one type code, no string made.
            let code = UInt8(truncatingIfNeeded: inner.typeCode)
            append(3) { at in
                at.initialize(to: 1)
                (at + 1).initialize(to: code)
                (at + 2).initialize(to: 0)
            }
        }
        try value(inner)
    }

    /// The start of an `a{sv}` entry: padding to 8, the key, the value's
    /// signature, in one reservation. The key is the code's own literal,
    /// so it is not searched for a NUL.
    fileprivate mutating func entryStart(_ key: StaticString, _ signature: StaticString) {
        key.withUTF8Buffer { key in
            signature.withUTF8Buffer { signature in
                let pad = Self.padding(count, 8)
                let keyLength = key.count
                let signatureLength = signature.count
                append(pad + 4 + keyLength + 1 + 1 + signatureLength + 1) { at in
                    Self.zero(at, pad)
                    var next = at + pad
                    UnsafeMutableRawPointer(next).storeBytes(of: UInt32(truncatingIfNeeded: keyLength).littleEndian, as: UInt32.self)
                    next += 4
                    if let base = key.baseAddress { next.initialize(from: base, count: keyLength) }
                    next += keyLength
                    next.initialize(to: 0)
                    (next + 1).initialize(to: UInt8(truncatingIfNeeded: signatureLength))
                    next += 2
                    if let base = signature.baseAddress { next.initialize(from: base, count: signatureLength) }
                    (next + signatureLength).initialize(to: 0)
                }
            }
        }
    }

    /// The alignment of a single complete type's values.
    static func alignment(of signature: String) -> Int {
        switch signature.utf8.first {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): return 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): return 8
        default: return 4  // b i u h s o a
        }
    }
}

/// Writes the entries of an `a{sv}` (``WireEncoder/vardict(_:)``): each
/// entry a key and a value in a variant, with no ``DBusValue`` in between
/// for the common types.
package struct VardictWriter {
    fileprivate(set) var encoder: WireEncoder

    private mutating func key(_ key: StaticString, _ signature: StaticString) {
        encoder.entryStart(key, signature)
    }

    /// `key` → `s`
    package mutating func string(_ key: StaticString, _ value: String) {
        self.key(key, "s")
        encoder.string(value)
    }

    /// `key` → `b`
    package mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key, "b")
        encoder.bool(value)
    }

    /// `key` → `u`
    package mutating func uint32(_ key: StaticString, _ value: UInt32) {
        self.key(key, "u")
        encoder.uint32(value)
    }

    /// `key` → `d`
    package mutating func double(_ key: StaticString, _ value: Double) {
        self.key(key, "d")
        encoder.double(value)
    }

    /// `key` → `as`
    package mutating func strings(_ key: StaticString, _ values: [String]) throws(DBusError) {
        self.key(key, "as")
        try encoder.strings(values)
    }

    /// `key` → `a{ss}`
    package mutating func stringDictionary(_ key: StaticString, _ value: [String: String]) throws(DBusError) {
        self.key(key, "a{ss}")
        try encoder.stringDictionary(value)
    }

    /// `key` → a value of type `signature` that `body` writes.
    package mutating func entry(
        _ key: StaticString, signature: StaticString, _ body: (inout WireEncoder) throws(DBusError) -> Void
    ) throws(DBusError) {
        self.key(key, signature)
        try body(&encoder)
    }

    /// `key` → any value, as its own type.
    package mutating func value(_ key: String, _ value: DBusValue) throws(DBusError) {
        encoder.align(8)
        encoder.string(key)
        try encoder.variant(value)
    }
}

extension WireEncoder {
    fileprivate mutating func append(bytesOf other: WireEncoder) {
        let count = other.count
        other.storage.withUnsafeMutablePointerToElements { from in
            append(count) { $0.initialize(from: from, count: count) }
        }
        invalidity = invalidity ?? other.invalidity
    }
}

extension DBusValue {
    /// The arguments `build` writes in wire format with `signature`, read
    /// back: the values an encoder's bytes stand for (for tests, and for a
    /// type that offers both its bytes and a value).
    package static func decoding(
        signature: Signature, _ build: (inout WireEncoder) throws(DBusError) -> Void
    ) throws(DBusError) -> [DBusValue] {
        var body = WireEncoder()
        try build(&body)
        let message = try Message.prebuiltSignal(
            path: "/", interface: "wire.Encoder", member: "Decoded", destination: nil,
            signature: signature, body: body)
        return try message.readArguments()
    }
}

// MARK: - Whole messages

/// One whole message in wire format: the fixed header and header fields
/// (padded to 8), then the body. flowd's own replies and signals are made
/// this way and written to the connection's socket as they are
/// (``Connection/send(_:)-(WireMessage)``); elsewhere libdbus loads them
/// (``Message/demarshaling(_:)``), which validates them as a message from
/// the bus.
///
/// What is written is valid by construction: names, paths and signatures
/// are the module's validated types, strings are checked for NUL as they
/// are written (``WireEncoder/invalidity``), and the writers of the body
/// write what their declared signature says, which every test checks in a
/// debug build: there, each message is also loaded by libdbus before it
/// leaves (``checkedInDebugBuilds()``), so a body that does not match its
/// signature fails the call instead of reaching the bus.
package struct WireMessage: Sendable {
    /// The fixed header and the header fields, a multiple of 8 long.
    package let header: [UInt8]
    /// The arguments.
    package let body: [UInt8]

    /// The whole message.
    package var bytes: [UInt8] { header + body }

    /// The serials of these messages: libdbus numbers what it builds from
    /// 1 upward; these count from 2³¹, so the two never meet in practice. A
    /// serial only has to be unique among a connection's method calls that
    /// await a reply, and these are replies and signals.
    private static let serials = Atomic<UInt32>(0x8000_0000)

    private static func nextSerial() -> UInt32 {
        let serial = serials.wrappingAdd(1, ordering: .relaxed).newValue
        return serial == 0 ? 0x8000_0000 : serial | 0x8000_0000
    }

    /// The longest message the specification allows.
    static let maximumLength = 1 << 27

    init(type: MessageType, fields: inout WireEncoder, signature: Signature, body: WireEncoder) throws(DBusError) {
        if let reason = body.invalidity ?? fields.invalidity { throw .invalidArgs("the message is not valid D-Bus: \(reason)") }
        if !signature.rawValue.isEmpty { fields.headerField(8, "g") { $0.signature(signature.rawValue) } }
        var header = WireEncoder(capacity: 16 + fields.count + 8)
        header.byte(UInt8(ascii: "l"))
        header.byte(UInt8(truncatingIfNeeded: type.rawValue))
        header.byte(0x1)  // NO_REPLY_EXPECTED, as libdbus sets on replies and signals
        header.byte(1)  // protocol version
        header.uint32(UInt32(truncatingIfNeeded: body.count))
        header.uint32(Self.nextSerial())
        header.uint32(UInt32(truncatingIfNeeded: fields.count))
        header.align(8)
        header.append(bytesOf: fields)
        header.align(8)
        guard header.count + body.count <= Self.maximumLength else {
            throw DBusError(.limitsExceeded, "the message is longer than the 128 MiB D-Bus allows")
        }
        self.header = header.bytes
        self.body = body.bytes
    }

    /// A method return for `call` whose arguments `body` holds with `signature`.
    package static func methodReturn(to call: Message, signature: Signature, body: WireEncoder) throws(DBusError) -> WireMessage {
        precondition(call.serial != 0, "a reply needs a call that was sent (its serial is 0)")
        var fields = WireEncoder(capacity: 64)
        fields.headerField(5, "u") { $0.uint32(call.serial) }  // REPLY_SERIAL
        if let sender = call.sender { fields.headerField(6, "s") { $0.string(sender.rawValue) } }  // DESTINATION
        return try WireMessage(type: .methodReturn, fields: &fields, signature: signature, body: body)
    }

    /// An error reply to `call`: its name, and its message as the one argument.
    package static func error(_ error: DBusError, to call: Message) throws(DBusError) -> WireMessage {
        precondition(call.serial != 0, "a reply needs a call that was sent (its serial is 0)")
        var fields = WireEncoder(capacity: 128)
        fields.headerField(4, "s") { $0.string(error.name.rawValue) }  // ERROR_NAME
        fields.headerField(5, "u") { $0.uint32(call.serial) }  // REPLY_SERIAL
        if let sender = call.sender { fields.headerField(6, "s") { $0.string(sender.rawValue) } }  // DESTINATION
        var body = WireEncoder(capacity: error.message.utf8.count + 5)
        body.string(error.message)
        return try WireMessage(type: .error, fields: &fields, signature: "s", body: body)
    }

    /// A signal whose arguments `body` holds with `signature`; `destination` unicasts it.
    package static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, destination: BusName?, signature: Signature,
        body: WireEncoder
    ) throws(DBusError) -> WireMessage {
        var fields = WireEncoder(capacity: 128)
        fields.headerField(1, "o") { $0.string(path.rawValue) }  // PATH
        fields.headerField(2, "s") { $0.string(interface.rawValue) }  // INTERFACE
        fields.headerField(3, "s") { $0.string(member.rawValue) }  // MEMBER
        if let destination { fields.headerField(6, "s") { $0.string(destination.rawValue) } }
        return try WireMessage(type: .signal, fields: &fields, signature: signature, body: body)
    }

    /// The message loaded by libdbus, which validates it as a message from the bus.
    package func loaded() throws(DBusError) -> Message {
        try Message.demarshaling(bytes)
    }

    /// In a debug build (every test), the message as libdbus loads it, so
    /// that a body which does not match its signature throws here; in a
    /// release build, the message unchanged.
    func checkedInDebugBuilds() throws(DBusError) -> WireMessage {
        #if DEBUG
            _ = try loaded()
        #endif
        return self
    }
}

extension Message {
    /// A signal whose arguments `body` holds in wire format with `signature`;
    /// `destination` unicasts it.
    package static func prebuiltSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, destination: BusName?, signature: Signature,
        body: WireEncoder
    ) throws(DBusError) -> Message {
        try WireMessage.signal(
            path: path, interface: interface, member: member, destination: destination, signature: signature, body: body
        ).loaded()
    }
}

extension WireEncoder {
    /// One header field: a `(yv)`, 8-aligned (the array starts 8-aligned
    /// in the message, at offset 16).
    fileprivate mutating func headerField(_ code: UInt8, _ signature: StaticString, _ write: (inout WireEncoder) -> Void) {
        align(8)
        byte(code)
        self.signature(signature)
        write(&self)
    }
}

extension DBusValue {
    /// True when a file descriptor is in the value: those travel beside the
    /// bytes, so only libdbus can send such a message.
    var containsUnixFD: Bool {
        switch self {
        case .unixFD: return true
        case .variant(let inner): return inner.containsUnixFD
        case .structure(let fields): return fields.contains { $0.containsUnixFD }
        case .array(let element, let items):
            if element.rawValue.utf8.contains(UInt8(ascii: "h")) { return true }
            return element.rawValue.utf8.contains(UInt8(ascii: "v")) && items.contains { $0.containsUnixFD }
        case .dictionary(let key, let value, let entries):
            if key.rawValue == "h" || value.rawValue.utf8.contains(UInt8(ascii: "h")) { return true }
            return value.rawValue.utf8.contains(UInt8(ascii: "v")) && entries.contains { $0.value.containsUnixFD }
        default: return false
        }
    }
}
