import FlowdSystem

/// The header of a received message, read from its wire format: the fixed
/// part and the header fields flowd routes on (docs/performance.md, "the
/// seventh round", R1).
///
/// libdbus reads every incoming message with its loader, which validates
/// the header fields again (some 20 k instructions of a call's 27 k), though
/// the bus daemon validated them already. This is the first piece of flowd
/// reading its own messages: the header checked as strictly as libdbus
/// does, at a fraction of the cost. The body is not read here; a reader of
/// it checks each value as it reads it, or libdbus loads the whole message
/// (``Message/demarshaling(_:)``), which it must for a big-endian one.
package struct IncomingHeader: Sendable, Equatable {
    /// The message was written big-endian (`B`), not little-endian (`l`).
    package var bigEndian: Bool
    /// The message type; nil for a type the specification does not know yet
    /// (a receiver ignores those).
    package var type: MessageType?
    /// The flags byte (`0x1` no reply expected, `0x2` no auto-start,
    /// `0x4` interactive authorization allowed).
    package var flags: UInt8
    /// The sender's serial for this message, never 0.
    package var serial: UInt32
    /// The serial of the call a reply answers; 0 for calls and signals.
    package var replySerial: UInt32 = 0
    package var path: ObjectPath?
    package var interface: InterfaceName?
    package var member: MemberName?
    package var errorName: ErrorName?
    package var destination: BusName?
    package var sender: BusName?
    /// The signature of the body ("" when it is empty).
    package var signature: Signature = .empty
    /// How many file descriptors travel with the message.
    package var unixFDs = 0
    /// Where the body starts: the fixed header and the fields, padded to 8.
    package var bodyOffset: Int
    /// The body's length in bytes.
    package var bodyLength: Int

    /// The whole message's length.
    package var length: Int { bodyOffset + bodyLength }

    /// The caller does not want a reply.
    package var noReplyExpected: Bool { flags & 0x1 != 0 }
}

/// A whole message as it arrived: its header, its bytes and the file
/// descriptors it carries (in the order the header counts them).
package struct IncomingMessage: Sendable {
    package var header: IncomingHeader
    package var bytes: [UInt8]
    package var fds: [UnixFD]

    /// The body, in the message's own byte order.
    package var body: ArraySlice<UInt8> { bytes[header.bodyOffset...] }
}

/// Cuts a connection's incoming byte stream into whole messages: bytes and
/// file descriptors go in as they arrive (a message split over several
/// reads, or several messages in one), whole messages come out with their
/// header read (``IncomingHeader``).
///
/// Strict, since the bytes come from another process: a wrong length, an
/// unknown byte order or protocol version, a header field of the wrong
/// type, twice, or missing for the message type, a non-zero padding byte,
/// a name that is not valid, fewer file descriptors than the header counts:
/// each throws, and the connection must then be closed (the stream has no
/// other way to find the next message's start). Nothing is read outside the
/// bytes that arrived.
package struct MessageFramer {
    /// The longest message accepted, at most the specification's 128 MiB.
    package let maximumLength: Int
    private var buffer: [UInt8] = []
    /// Bytes of ``buffer`` before this index belong to messages handed out.
    private var consumed = 0
    private var fds: [UnixFD] = []
    /// A malformed message was seen: the stream is unusable from there.
    private var broken: DBusError?
    /// The names the last messages carried, shared by the next ones that
    /// carry the same bytes.
    private var recent = RecentNames()

    package init(maximumLength: Int = WireMessage.maximumLength) {
        self.maximumLength = min(maximumLength, WireMessage.maximumLength)
    }

    /// Bytes not yet handed out as a message.
    package var pendingBytes: Int { buffer.count - consumed }

    /// File descriptors not yet handed out with a message.
    package var pendingFDs: Int { fds.count }

    /// Appends bytes read from the connection, and the file descriptors that
    /// came with them.
    package mutating func append(_ bytes: UnsafeRawBufferPointer, fds received: [FileDescriptor] = []) {
        if consumed > 0 && (consumed == buffer.count || consumed >= 1 << 16) {
            buffer.removeSubrange(..<consumed)
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
        fds.append(contentsOf: received.map { UnixFD(owning: $0) })
    }

    /// Appends bytes read from the connection.
    package mutating func append(_ bytes: [UInt8], fds received: [FileDescriptor] = []) {
        bytes.withUnsafeBytes { append($0, fds: received) }
    }

    /// The next whole message, or nil until more bytes arrive.
    ///
    /// - Throws: `InconsistentMessage` for bytes that are not a D-Bus message
    ///   (then again on every later call).
    package mutating func next() throws(DBusError) -> IncomingMessage? {
        if let broken { throw broken }
        do throws(DBusError) {
            let available = buffer.count - consumed
            guard available >= 16 else { return nil }
            let parsed = buffer.withUnsafeBytes { all -> Result<IncomingHeader?, DBusError> in
                let bytes = UnsafeRawBufferPointer(rebasing: all[consumed...])
                do throws(DBusError) {
                    let (bodyOffset, bodyLength) = try Self.lengths(bytes, maximumLength: maximumLength)
                    guard bytes.count >= bodyOffset + bodyLength else { return .success(nil) }
                    return .success(
                        try Self.header(UnsafeRawBufferPointer(rebasing: bytes[..<bodyOffset]), bodyLength: bodyLength, recent: &recent))
                } catch {
                    return .failure(error)
                }
            }
            guard let header = try parsed.get() else { return nil }
            guard header.unixFDs <= fds.count else {
                throw DBusError.inconsistentMessage(
                    "the message carries \(header.unixFDs) file descriptors but \(fds.count) arrived")
            }
            let message = IncomingMessage(
                header: header, bytes: Array(buffer[consumed..<(consumed + header.length)]),
                fds: Array(fds.prefix(header.unixFDs)))
            fds.removeFirst(header.unixFDs)
            consumed += header.length
            return message
        } catch {
            broken = error
            throw error
        }
    }

    // MARK: reading the header

    /// The body's offset and length from the fixed header (16 bytes), checked
    /// before the rest arrives so that a huge length is refused at once.
    static func lengths(_ bytes: UnsafeRawBufferPointer, maximumLength: Int) throws(DBusError) -> (Int, Int) {
        var cursor = try WireCursor(bytes, endianness: bytes[0], part: "header")
        guard bytes[3] == 1 else { throw .inconsistentMessage("protocol version \(bytes[3]) is not 1") }
        cursor.offset = 4
        let bodyLength = Int(try cursor.uint32())
        cursor.offset = 12
        let fieldsLength = Int(try cursor.uint32())
        let bodyOffset = (16 + fieldsLength + 7) & ~7
        guard fieldsLength <= WireCursor.maximumArrayLength, bodyLength <= maximumLength,
            bodyOffset + bodyLength <= maximumLength
        else {
            throw .inconsistentMessage("a message of \(bodyOffset + bodyLength) bytes is longer than the \(maximumLength) allowed")
        }
        return (bodyOffset, bodyLength)
    }

    /// The fixed header and the fields, `bytes` being exactly those (padded).
    /// A name equal to the one `recent` holds for its field is that string
    /// (checked once, made once); any other is checked on its bytes and made
    /// a string once, and kept in `recent`.
    static func header(
        _ bytes: UnsafeRawBufferPointer, bodyLength: Int, recent: inout RecentNames
    ) throws(DBusError) -> IncomingHeader {
        var cursor = try WireCursor(bytes, endianness: bytes[0], part: "header")
        let rawType = bytes[1]
        guard rawType != 0 else { throw .inconsistentMessage("message type 0 is invalid") }
        cursor.offset = 8
        let serial = try cursor.uint32()
        guard serial != 0 else { throw .inconsistentMessage("the serial is 0") }
        var header = IncomingHeader(
            bigEndian: bytes[0] == UInt8(ascii: "B"), type: MessageType(rawValue: Int32(rawType)), flags: bytes[2],
            serial: serial, bodyOffset: bytes.count, bodyLength: bodyLength)
        let fieldsEnd = 16 + Int(try cursor.uint32())
        var seen: UInt16 = 0
        while cursor.offset < fieldsEnd {
            try cursor.align(8)
            let code = try cursor.byte()
            let typeStart = cursor.offset
            let type = try cursor.fieldType()
            guard code <= Self.lastField else {
                guard try cursor.skipBasic(type) else {
                    throw .inconsistentMessage(
                        "header field \(code) has type '\(cursor.fieldTypeText(at: typeStart))', which is not a basic type")
                }
                continue
            }
            guard code != 0 else { throw .inconsistentMessage("header field 0 is invalid") }
            guard seen & (1 << code) == 0 else { throw .inconsistentMessage("header field \(code) appears twice") }
            seen |= 1 << code
            guard type == Self.fieldType(code) else {
                throw .inconsistentMessage(
                    "header field \(code) has type '\(cursor.fieldTypeText(at: typeStart))', "
                        + "not '\(Character(Unicode.Scalar(Self.fieldType(code))))'")
            }
            switch code {
            case 1: header.path = try cursor.name(ObjectPath.self, recent: &recent.path)
            case 2: header.interface = try cursor.name(InterfaceName.self, recent: &recent.interface)
            case 3: header.member = try cursor.name(MemberName.self, recent: &recent.member)
            case 4: header.errorName = try cursor.name(ErrorName.self, recent: &recent.errorName)
            case 5:
                header.replySerial = try cursor.uint32()
                guard header.replySerial != 0 else { throw .inconsistentMessage("the reply serial is 0") }
            case 6: header.destination = try cursor.name(BusName.self, recent: &recent.destination)
            case 7: header.sender = try cursor.name(BusName.self, recent: &recent.sender)
            case 8: header.signature = try cursor.name(Signature.self, recent: &recent.signature)
            case 9: header.unixFDs = Int(try cursor.uint32())
            default: try cursor.skipName(ObjectPath.self)  // 10, the container instance: checked, not used
            }
        }
        guard cursor.offset == fieldsEnd else { throw .inconsistentMessage("a header field runs past the fields' end") }
        try cursor.align(8)
        guard cursor.offset == bytes.count else { throw .inconsistentMessage("the header's length is inconsistent") }
        try Self.checkRequired(header)
        return header
    }

    /// The last header field libdbus knows: 10, the container instance
    /// (`DBUS_HEADER_FIELD_CONTAINER_INSTANCE`, an object path), which its
    /// loader checks like the others (type, path, not twice); any later
    /// field is skipped.
    private static let lastField: UInt8 = 10

    /// The type code the known header field `code` (1...10) must have.
    private static func fieldType(_ code: UInt8) -> UInt8 {
        switch code {
        case 1, 10: UInt8(ascii: "o")
        case 5, 9: UInt8(ascii: "u")
        case 8: UInt8(ascii: "g")
        default: UInt8(ascii: "s")
        }
    }

    /// What the specification requires per message type, and what no peer
    /// may send: the local path and interface libdbus uses for its own
    /// `Disconnected` signal.
    private static func checkRequired(_ header: IncomingHeader) throws(DBusError) {
        switch header.type {
        case .methodCall:
            guard header.path != nil, header.member != nil else { throw .inconsistentMessage("a method call without path or member") }
        case .signal:
            guard header.path != nil, header.interface != nil, header.member != nil else {
                throw .inconsistentMessage("a signal without path, interface or member")
            }
        case .error:
            guard header.errorName != nil, header.replySerial != 0 else {
                throw .inconsistentMessage("an error without error name or reply serial")
            }
        case .methodReturn:
            guard header.replySerial != 0 else { throw .inconsistentMessage("a method return without reply serial") }
        case nil:
            break
        }
        if header.path?.rawValue == "/org/freedesktop/DBus/Local" || header.interface == .local {
            throw .inconsistentMessage("a message may not use the local path or interface")
        }
        if header.bodyLength > 0 && header.signature.rawValue.isEmpty {
            throw .inconsistentMessage("a body of \(header.bodyLength) bytes without a signature")
        }
    }
}

/// The last name each header field carried, as a string: a connection's
/// messages mostly repeat them (the sender, flowd's name as destination,
/// the interface), so a name is checked and made once and then shared by
/// each message that carries the same bytes.
struct RecentNames {
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var destination: String?
    var sender: String?
    var signature: String?
}

/// Reads a message's values in its byte order, never outside its bytes;
/// alignment counts from the message's first byte (where the body starts
/// is 8-aligned, so the body's values align the same). The framer reads the
/// header with it, ``BodyReader`` the body.
struct WireCursor {
    /// The longest array the specification allows (64 MiB).
    static let maximumArrayLength = 1 << 26

    let bytes: UnsafeRawBufferPointer
    let bigEndian: Bool
    /// "header" or "body", for the errors.
    let part: StaticString
    var offset: Int

    /// A cursor at `offset` of a message's `bytes`.
    init(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool, part: StaticString, offset: Int = 0) {
        self.bytes = bytes
        self.bigEndian = bigEndian
        self.part = part
        self.offset = offset
    }

    /// A cursor at the start of a message whose first byte is `endianness`.
    init(_ bytes: UnsafeRawBufferPointer, endianness: UInt8, part: StaticString) throws(DBusError) {
        switch endianness {
        case UInt8(ascii: "l"): self.init(bytes, bigEndian: false, part: part)
        case UInt8(ascii: "B"): self.init(bytes, bigEndian: true, part: part)
        default: throw .inconsistentMessage("byte order \(endianness) is neither 'l' nor 'B'")
        }
    }

    /// True when every byte is read.
    var isAtEnd: Bool { offset == bytes.count }

    /// Throws unless `count` more bytes are there.
    /// (Inlined, with its error made out of line: every value read asks.)
    @inline(__always)
    func need(_ count: Int) throws(DBusError) {
        guard count <= bytes.count - offset else { throw pastEnd() }
    }

    @inline(never)
    private func pastEnd() -> DBusError { .inconsistentMessage("a value runs past the end of the \(part)") }

    /// Skips the padding to `alignment`, which must be zero bytes.
    @inline(__always)
    mutating func align(_ alignment: Int) throws(DBusError) {
        let padded = (offset + alignment - 1) & ~(alignment - 1)
        if padded != offset { try skipPadding(to: padded) }
    }

    /// Skips zero bytes up to `padded`.
    @inline(never)
    private mutating func skipPadding(to padded: Int) throws(DBusError) {
        try need(padded - offset)
        while offset < padded {
            guard bytes[offset] == 0 else { throw .inconsistentMessage("a padding byte in the \(part) is not zero") }
            offset += 1
        }
    }

    /// A fixed-size integer, aligned to its size.
    mutating func fixed<T: FixedWidthInteger>(_ type: T.Type) throws(DBusError) -> T {
        let size = MemoryLayout<T>.size
        try align(size)
        try need(size)
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    mutating func byte() throws(DBusError) -> UInt8 { try fixed(UInt8.self) }
    mutating func uint32() throws(DBusError) -> UInt32 { try fixed(UInt32.self) }

    /// `count` bytes and the NUL after them, as a string (UTF-8, no NUL inside).
    private mutating func text(count: Int) throws(DBusError) -> String {
        String(decoding: try checkedText(count: count), as: UTF8.self)
    }

    /// The `count` bytes of a string, checked (the NUL after them, none
    /// inside, UTF-8); the cursor moves past the NUL. ASCII needs no more
    /// than one look at each byte.
    private mutating func checkedText(count: Int) throws(DBusError) -> UnsafeRawBufferPointer {
        try need(count + 1)
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        var high: UInt8 = 0
        var terminated = bytes[offset + count] == 0
        for byte in slice {
            if byte == 0 { terminated = false }
            high |= byte
        }
        guard terminated else { throw .inconsistentMessage("a string in the \(part) is not terminated as its length says") }
        offset += count + 1
        guard high < 0x80 || String(validating: slice, as: UTF8.self) != nil else {
            throw .inconsistentMessage("a string in the \(part) is not UTF-8")
        }
        return slice
    }

    /// Moves past a string (`s`), checked as ``string()`` checks it, without making it.
    mutating func skipString() throws(DBusError) {
        _ = try checkedText(count: Int(try uint32()))
    }

    /// A header field's type (a signature, `g`): its one type code, or 0
    /// when it is not one ASCII code, which no header field has; such a
    /// signature is still read as ``signature()`` reads it, with its errors.
    mutating func fieldType() throws(DBusError) -> UInt8 {
        if offset + 3 <= bytes.count, bytes[offset] == 1, bytes[offset + 2] == 0 {
            let code = bytes[offset + 1]
            if code != 0 && code < 0x80 {
                offset += 3
                return code
            }
        }
        _ = try signature()
        return 0
    }

    /// The field type ``fieldType()`` read at `start`, as text for an error.
    func fieldTypeText(at start: Int) -> String {
        var cursor = self
        cursor.offset = start
        return (try? cursor.signature()) ?? ""
    }

    /// A signature (`g`): one length byte.
    mutating func signature() throws(DBusError) -> String {
        try text(count: Int(try byte()))
    }

    /// A string or object path (`s`, `o`): a 32-bit length.
    mutating func string() throws(DBusError) -> String {
        try text(count: Int(try uint32()))
    }

    /// A name (`o`, `g`, or an `s` holding one), checked by its type's
    /// rules. When its bytes are those of `recent`, it is that string (valid
    /// already); otherwise it is made once, and becomes `recent`.
    mutating func name<Name: ValidatedName>(_ type: Name.Type, recent: inout String?) throws(DBusError) -> Name {
        if var known = recent {
            let start = offset
            let count = Name.self == Signature.self ? Int(try byte()) : Int(try uint32())
            let end = offset + count
            if count == known.utf8.count, count < bytes.count - offset, bytes[end] == 0,
                known.withUTF8({ NameRules.bytesEqual(UnsafeRawBufferPointer($0), UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) })
            {
                offset = end + 1
                return Name(trusted: known)
            }
            offset = start
        }
        let made = String(decoding: try nameBytes(Name.self), as: UTF8.self)
        recent = made
        return Name(trusted: made)
    }

    /// A name (`o`, `g`, or an `s` holding one), checked by its type's rules.
    mutating func name<Name: ValidatedName>(_ type: Name.Type) throws(DBusError) -> Name {
        Name(trusted: String(decoding: try nameBytes(Name.self), as: UTF8.self))
    }

    /// Moves past a name, checked as ``name(_:)`` checks it, without making it.
    mutating func skipName<Name: ValidatedName>(_ type: Name.Type) throws(DBusError) {
        _ = try nameBytes(Name.self)
    }

    /// The bytes of a name (without its NUL), checked by its type's rules on
    /// the bytes (``ValidatedName/isValid(_:)``); the cursor moves past it.
    /// Only a name they refuse is made a string: for the string checks
    /// (terminated, UTF-8) and libdbus' reason, in the errors they had.
    mutating func nameBytes<Name: ValidatedName>(_ type: Name.Type) throws(DBusError) -> UnsafeRawBufferPointer {
        let count = Name.self == Signature.self ? Int(try byte()) : Int(try uint32())
        let start = offset
        if count < bytes.count - start, bytes[start + count] == 0 {
            let name = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])
            if Name.isValid(name) {
                offset = start + count + 1
                return name
            }
        }
        let raw = try text(count: count)
        if let error = Name.validate(raw) { throw .inconsistentMessage("a value in the \(part) is invalid: \(error.message)") }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])
    }

    /// Skips the value of a header field flowd does not know (the
    /// specification says to ignore those); only single basic values, which
    /// are all the specification has defined for header fields. False for
    /// any other type (`type` is its one code, or 0).
    mutating func skipBasic(_ type: UInt8) throws(DBusError) -> Bool {
        switch type {
        case UInt8(ascii: "y"): _ = try byte()
        case UInt8(ascii: "n"), UInt8(ascii: "q"): _ = try fixed(UInt16.self)
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"): _ = try uint32()
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"): _ = try fixed(UInt64.self)
        case UInt8(ascii: "s"), UInt8(ascii: "o"): _ = try string()
        case UInt8(ascii: "g"): _ = try signature()
        default: return false
        }
        return true
    }
}

extension DBusError {
    /// `org.freedesktop.DBus.Error.InconsistentMessage`: bytes that are not a
    /// valid message.
    package static func inconsistentMessage(_ message: String) -> DBusError { DBusError(.inconsistentMessage, message) }
}

extension ErrorName {
    /// `org.freedesktop.DBus.Error.InconsistentMessage`.
    package static let inconsistentMessage: ErrorName = "org.freedesktop.DBus.Error.InconsistentMessage"
}
