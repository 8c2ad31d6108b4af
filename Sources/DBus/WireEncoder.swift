import Synchronization

/// Writes message arguments straight into D-Bus wire format (little-endian),
/// for the replies and signals a service sends most often.
///
/// libdbus builds a message one iterator step at a time, and each step costs
/// about a thousand instructions (type checks against the signature being
/// built, a validation of every variant's signature, header updates); an
/// `a{sv}` entry takes six steps. This writes the same bytes directly and
/// hands the finished message to libdbus in one piece
/// (``Message/prebuiltReturn(to:signature:body:)``), which validates it
/// once, as it would a message from the bus. What libdbus would refuse
/// (a NUL in a string, a wrong signature) is refused there too.
///
/// The writer knows no types: callers write what their declared signature
/// says, and ``Message`` checks the result against it.
package struct WireEncoder {
    /// The bytes written so far; offset 0 is the start of the body, which
    /// is 8-aligned in the message, so alignment here is alignment there.
    package private(set) var bytes: [UInt8] = []

    /// Why the bytes are no valid D-Bus body, nil while they are. Checked as
    /// they are written (a NUL inside a string, an array over the 64 MiB the
    /// specification allows): flowd's own messages go to the socket without
    /// libdbus reading them again, and the bus disconnects a sender of an
    /// invalid message. Structure against the signature is the writer's
    /// part (see ``WireMessage``).
    package private(set) var invalidity: String?

    /// An empty body, with room for a typical reply.
    package init() {
        bytes.reserveCapacity(1024)
    }

    private init(empty: Void) {}

    /// Pads with zeros to a multiple of `alignment` (1, 2, 4 or 8).
    package mutating func align(_ alignment: Int) {
        let rest = bytes.count & (alignment - 1)
        if rest != 0 { bytes.append(contentsOf: repeatElement(0, count: alignment - rest)) }
    }

    private mutating func raw<T: FixedWidthInteger>(_ value: T) {
        align(MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// `y`
    package mutating func byte(_ value: UInt8) { bytes.append(value) }
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
        value.withUTF8 { utf8 in
            raw(UInt32(truncatingIfNeeded: utf8.count))
            bytes.append(contentsOf: utf8)
            if utf8.contains(0) { invalidity = invalidity ?? "a string holds a NUL character" }
        }
        bytes.append(0)
    }

    /// `g`: an 8-bit length, the bytes, a NUL.
    package mutating func signature(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            bytes.append(UInt8(truncatingIfNeeded: utf8.count))
            bytes.append(contentsOf: utf8)
        }
        bytes.append(0)
    }

    /// `a…`: the length, padding to the elements' alignment (also when there
    /// are none), the elements `body` writes, then the length filled in.
    package mutating func array(elementAlignment: Int, _ body: (inout WireEncoder) throws(DBusError) -> Void)
        throws(DBusError)
    {
        raw(UInt32(0))
        let lengthAt = bytes.count - 4
        align(elementAlignment)
        let start = bytes.count
        try body(&self)
        if bytes.count - start > Self.maximumArrayLength {
            invalidity = invalidity ?? "an array is longer than the 64 MiB D-Bus allows"
        }
        let length = UInt32(truncatingIfNeeded: bytes.count - start)
        withUnsafeBytes(of: length.littleEndian) { raw in
            for i in 0..<4 { bytes[lengthAt + i] = raw[i] }
        }
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
            var writer = VardictWriter(encoder: WireEncoder(empty: ()))
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
        signature(inner.signature.rawValue)
        try value(inner)
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

    private mutating func key(_ key: String, _ signature: StaticString) {
        encoder.align(8)
        encoder.string(key)
        encoder.byte(UInt8(truncatingIfNeeded: signature.utf8CodeUnitCount))
        signature.withUTF8Buffer { encoder.append(raw: $0) }
        encoder.byte(0)
    }

    /// `key` → `s`
    package mutating func string(_ key: String, _ value: String) {
        self.key(key, "s")
        encoder.string(value)
    }

    /// `key` → `b`
    package mutating func bool(_ key: String, _ value: Bool) {
        self.key(key, "b")
        encoder.bool(value)
    }

    /// `key` → `u`
    package mutating func uint32(_ key: String, _ value: UInt32) {
        self.key(key, "u")
        encoder.uint32(value)
    }

    /// `key` → `d`
    package mutating func double(_ key: String, _ value: Double) {
        self.key(key, "d")
        encoder.double(value)
    }

    /// `key` → `as`
    package mutating func strings(_ key: String, _ values: [String]) throws(DBusError) {
        self.key(key, "as")
        try encoder.strings(values)
    }

    /// `key` → `a{ss}`
    package mutating func stringDictionary(_ key: String, _ value: [String: String]) throws(DBusError) {
        self.key(key, "a{ss}")
        try encoder.stringDictionary(value)
    }

    /// `key` → a value of type `signature` that `body` writes.
    package mutating func entry(
        _ key: String, signature: StaticString, _ body: (inout WireEncoder) throws(DBusError) -> Void
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
        bytes.append(contentsOf: other.bytes)
        invalidity = invalidity ?? other.invalidity
    }

    fileprivate mutating func append(raw buffer: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: buffer)
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
        var header = WireEncoder(capacity: 16 + fields.bytes.count + 8)
        header.byte(UInt8(ascii: "l"))
        header.byte(UInt8(truncatingIfNeeded: type.rawValue))
        header.byte(0x1)  // NO_REPLY_EXPECTED, as libdbus sets on replies and signals
        header.byte(1)  // protocol version
        header.uint32(UInt32(truncatingIfNeeded: body.bytes.count))
        header.uint32(Self.nextSerial())
        header.uint32(UInt32(truncatingIfNeeded: fields.bytes.count))
        header.align(8)
        header.append(bytesOf: fields)
        header.align(8)
        guard header.bytes.count + body.bytes.count <= Self.maximumLength else {
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
    /// A method return for this received call whose arguments `body` holds
    /// in wire format with `signature`, loaded by libdbus in one piece.
    package func prebuiltReturn(signature: Signature, body: WireEncoder) throws(DBusError) -> Message {
        try WireMessage.methodReturn(to: self, signature: signature, body: body).loaded()
    }

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
    /// An empty encoder with room for `capacity` bytes.
    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// One header field: a `(yv)`, 8-aligned (the array starts 8-aligned
    /// in the message, at offset 16).
    fileprivate mutating func headerField(_ code: UInt8, _ signature: String, _ write: (inout WireEncoder) -> Void) {
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
