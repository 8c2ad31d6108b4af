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
///
/// Each method here checks that the buffer is the encoder's own (an encoder
/// is a value, copied on write as an array is); a reply written in many
/// small pieces writes them through ``write(_:)``, which checks once
/// (docs/performance.md, "The seventh round").
package struct WireEncoder {
    /// The bytes written so far; offset 0 is the start of the body, which
    /// is 8-aligned in the message, so alignment here is alignment there.
    package var bytes: [UInt8] {
        withExtendedLifetime(storage) { Array(UnsafeBufferPointer(start: base, count: count)) }
    }

    /// How many bytes are written.
    package private(set) var count: Int

    /// Why the bytes are no valid D-Bus body, nil while they are. Checked as
    /// they are written (a NUL inside a string, an array over the 64 MiB the
    /// specification allows): flowd's own messages go to the socket without
    /// libdbus reading them again, and the bus disconnects a sender of an
    /// invalid message. Structure against the signature is the writer's
    /// part (see ``WireMessage``).
    package private(set) var invalidity: String?

    /// The bytes, in a buffer of their own: writing one is a capacity check
    /// and a copy, where `Array.append(contentsOf:)` cost about a hundred
    /// instructions per call (docs/performance.md, "the sixth round").
    /// ``base`` points at its elements (which never move while it lives),
    /// ``capacity`` of them; the encoder keeps count and capacity itself, so
    /// a write reads no header of a class.
    private var storage: ManagedBuffer<Void, UInt8>
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int

    /// A buffer and its elements, for `capacity` bytes.
    private static func storage(capacity: Int) -> (ManagedBuffer<Void, UInt8>, UnsafeMutablePointer<UInt8>) {
        let buffer = ManagedBuffer<Void, UInt8>.create(minimumCapacity: capacity) { _ in () }
        return (buffer, buffer.withUnsafeMutablePointerToElements { $0 })
    }

    /// An empty body, with room for a typical reply (a `GetStep` reply of
    /// a form step is 1–2 KiB; with 1 KiB, half of them grew once).
    package init() {
        self.init(capacity: 2048)
    }

    /// An empty encoder with room for `capacity` bytes.
    init(capacity: Int) {
        let capacity = Swift.max(capacity, 16)
        (storage, base) = Self.storage(capacity: capacity)
        self.capacity = capacity
        count = 0
    }

    /// An encoder on a buffer shared by all of them, never written: what
    /// ``write(_:)`` leaves behind while the bytes are in the writer.
    private init(placeholder: ()) {
        (storage, base) = Self.placeholder
        capacity = 0
        count = 0
    }

    nonisolated(unsafe) private static let placeholder = storage(capacity: 0)

    // MARK: The one place that reserves

    /// Makes room for `count` more bytes and returns the first of them,
    /// uninitialized: the caller writes them (and may write up to
    /// ``slack`` bytes past them, which later writes overwrite). The
    /// buffer must be the encoder's own (``makeUnique()``).
    @inline(__always)
    private mutating func reserve(_ more: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(count &+ more &+ Self.slack > capacity) { reallocate(adding: more &+ Self.slack) }
        return base + count
    }

    /// Room past the reserved bytes that a write may scribble on: a key's
    /// head (``VardictKey``) is stored as whole words.
    private static let slack = 8

    /// Makes the buffer the encoder's own (a copy of the encoder shares it).
    @inline(__always)
    private mutating func makeUnique() {
        if _slowPath(!isKnownUniquelyReferenced(&storage)) { reallocate(adding: 0) }
    }

    /// A buffer of its own with room for `more` bytes past ``count``.
    @inline(never)
    private mutating func reallocate(adding more: Int) {
        var capacity = Swift.max(capacity, 16)
        while capacity < count + more { capacity *= 2 }
        let old = storage
        let (new, elements) = Self.storage(capacity: capacity)
        withExtendedLifetime(old) { elements.initialize(from: base, count: count) }
        storage = new
        base = elements
        self.capacity = capacity
    }

    /// The zeros that pad `count` bytes to a multiple of `alignment`.
    @inline(__always)
    private static func padding(_ count: Int, _ alignment: Int) -> Int {
        (alignment &- (count & (alignment &- 1))) & (alignment &- 1)
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

    // MARK: Writes on a buffer of the encoder's own (``WireWriter`` and the checked methods below)

    @inline(__always)
    fileprivate mutating func putAlign(_ alignment: Int) {
        let pad = Self.padding(count, alignment)
        if pad != 0 {
            Self.zero(reserve(pad), pad)
            count &+= pad
        }
    }

    @inline(__always)
    fileprivate mutating func putByte(_ value: UInt8) {
        reserve(1).initialize(to: value)
        count &+= 1
    }

    @inline(__always)
    fileprivate mutating func putRaw<T: FixedWidthInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        let pad = Self.padding(count, size)
        let at = reserve(pad &+ size)
        Self.zero(at, pad)
        UnsafeMutableRawPointer(at + pad).storeBytes(of: value.littleEndian, as: T.self)
        count &+= pad &+ size
    }

    /// `s`: padding to 4, the length, the bytes, a NUL, in one reservation;
    /// the bytes are copied and searched for a NUL in one pass.
    fileprivate mutating func putString(utf8: UnsafeBufferPointer<UInt8>) {
        let length = utf8.count
        let pad = Self.padding(count, 4)
        let at = reserve(pad &+ 4 &+ length &+ 1)
        Self.zero(at, pad)
        UnsafeMutableRawPointer(at + pad).storeBytes(of: UInt32(truncatingIfNeeded: length).littleEndian, as: UInt32.self)
        let to = at + (pad &+ 4)
        if let from = utf8.baseAddress, Self.copyFindingNUL(from, to, length) {
            invalidity = invalidity ?? "a string holds a NUL character"
        }
        (to + length).initialize(to: 0)
        count &+= pad &+ 4 &+ length &+ 1
    }

    /// Copies `count` bytes, eight at a time, and tells whether one of them
    /// is zero (a word has a zero byte exactly when
    /// `(w - 0x01…01) & ~w & 0x80…80` is not zero).
    @inline(__always)
    private static func copyFindingNUL(
        _ from: UnsafePointer<UInt8>, _ to: UnsafeMutablePointer<UInt8>, _ count: Int
    ) -> Bool {
        let source = UnsafeRawPointer(from)
        let target = UnsafeMutableRawPointer(to)
        var zeros: UInt64 = 0
        var index = 0
        while index &+ 8 <= count {
            let word = source.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            zeros |= (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
            target.storeBytes(of: word, toByteOffset: index, as: UInt64.self)
            index &+= 8
        }
        var zero = zeros != 0
        while index < count {
            let byte = from[index]
            zero = zero || byte == 0
            to[index] = byte
            index &+= 1
        }
        return zero
    }

    /// A native string's bytes are read in place (no copy of the string,
    /// and so no retain and release of its storage); others are made
    /// contiguous first.
    @inline(__always)
    fileprivate mutating func putString(_ value: String) {
        if value.utf8.withContiguousStorageIfAvailable({ putString(utf8: $0) }) == nil {
            var value = value
            value.withUTF8 { putString(utf8: $0) }
        }
    }

    /// `g`: an 8-bit length, the bytes, a NUL (a signature is ours, and valid).
    fileprivate mutating func putSignature(utf8: UnsafeBufferPointer<UInt8>) {
        let length = utf8.count
        let at = reserve(length &+ 2)
        at.initialize(to: UInt8(truncatingIfNeeded: length))
        if let from = utf8.baseAddress { (at + 1).initialize(from: from, count: length) }
        (at + 1 + length).initialize(to: 0)
        count &+= length &+ 2
    }

    /// The start of an array: its length (filled in by ``putArrayEnd(_:)``)
    /// and the padding to its elements' alignment (also when there are none).
    fileprivate mutating func putArrayStart(_ elementAlignment: Int) -> WireWriter.ArrayStart {
        putRaw(UInt32(0))
        let lengthAt = count &- 4
        putAlign(elementAlignment)
        return WireWriter.ArrayStart(lengthAt: lengthAt, start: count)
    }

    fileprivate mutating func putArrayEnd(_ array: WireWriter.ArrayStart) {
        let length = count &- array.start
        if length > Self.maximumArrayLength {
            invalidity = invalidity ?? "an array is longer than the 64 MiB D-Bus allows"
        }
        UnsafeMutableRawPointer(base + array.lengthAt).storeBytes(
            of: UInt32(truncatingIfNeeded: length).littleEndian, as: UInt32.self)
    }

    /// Bytes copied as they are.
    fileprivate mutating func putBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let from = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count).initialize(from: from, count: bytes.count)
        count &+= bytes.count
    }

    /// An entry's padding to 8 and its fixed head, copied as whole words.
    @inline(__always)
    fileprivate mutating func putEntry(_ key: VardictKey) {
        let pad = Self.padding(count, 8)
        let at = reserve(pad &+ VardictKey.capacity)
        Self.zero(at, pad)
        UnsafeMutableRawPointer(at + pad).storeBytes(of: key.head, as: VardictKey.Head.self)
        count &+= pad &+ key.length
    }

    fileprivate mutating func putValue(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .byte(let v): putByte(v)
        case .bool(let v): putRaw(UInt32(v ? 1 : 0))
        case .int16(let v): putRaw(v)
        case .uint16(let v): putRaw(v)
        case .int32(let v): putRaw(v)
        case .uint32(let v): putRaw(v)
        case .int64(let v): putRaw(v)
        case .uint64(let v): putRaw(v)
        case .double(let v): putRaw(v.bitPattern)
        case .string(let v): putString(v)
        case .objectPath(let v): putString(v.rawValue)
        case .signature(let v):
            var text = v.rawValue
            text.withUTF8 { putSignature(utf8: $0) }
        case .unixFD: throw .invalidArgs("a file descriptor cannot be written into a prebuilt message")
        case .variant(let inner): try putVariant(inner)
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("a struct needs at least one field") }
            putAlign(8)
            for field in fields { try putValue(field) }
        case .array(let elementType, let items):
            for item in items where !item.hasType(elementType) {
                throw .invalidArgs("array of '\(elementType)' holds a '\(item.signature)'")
            }
            let array = putArrayStart(Self.alignment(of: elementType.rawValue))
            for item in items { try putValue(item) }
            putArrayEnd(array)
        case .dictionary(let keyType, let valueType, let entries):
            for entry in entries {
                guard entry.key.hasType(keyType), entry.value.hasType(valueType) else {
                    throw .invalidArgs(
                        "dictionary of '\(keyType)' to '\(valueType)' holds '\(entry.key.signature)' to '\(entry.value.signature)'")
                }
            }
            let array = putArrayStart(8)
            for entry in entries {
                putAlign(8)
                try putValue(entry.key)
                try putValue(entry.value)
            }
            putArrayEnd(array)
        }
    }

    /// `v`: the value's signature, then the value.
    fileprivate mutating func putVariant(_ inner: DBusValue) throws(DBusError) {
        switch inner {
        case .array, .dictionary, .structure:
            var text = inner.signature.rawValue
            text.withUTF8 { putSignature(utf8: $0) }
        default:
            // A basic type or a variant: its one type code, no string made.
            let at = reserve(3)
            at.initialize(to: 1)
            (at + 1).initialize(to: UInt8(truncatingIfNeeded: inner.typeCode))
            (at + 2).initialize(to: 0)
            count &+= 3
        }
        try putValue(inner)
    }

    fileprivate mutating func putStringDictionary(_ dictionary: [String: String]) {
        let array = putArrayStart(8)
        for (key, value) in dictionary {
            putAlign(8)
            putString(key)
            putString(value)
        }
        putArrayEnd(array)
    }

    fileprivate mutating func putStrings(_ values: [String]) {
        let array = putArrayStart(4)
        for value in values { putString(value) }
        putArrayEnd(array)
    }

    // MARK: Checked writes, one piece at a time

    /// Pads with zeros to a multiple of `alignment` (1, 2, 4 or 8).
    package mutating func align(_ alignment: Int) {
        makeUnique()
        putAlign(alignment)
    }

    /// `y`
    package mutating func byte(_ value: UInt8) {
        makeUnique()
        putByte(value)
    }
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

    private mutating func raw<T: FixedWidthInteger>(_ value: T) {
        makeUnique()
        putRaw(value)
    }

    /// `s` and `o`: a 32-bit length, the UTF-8 bytes, a NUL.
    package mutating func string(_ value: String) {
        makeUnique()
        putString(value)
    }

    /// `g`: an 8-bit length, the bytes, a NUL.
    package mutating func signature(_ value: String) {
        makeUnique()
        var value = value
        value.withUTF8 { putSignature(utf8: $0) }
    }

    /// `g` from bytes known at compile time.
    package mutating func signature(_ value: StaticString) {
        makeUnique()
        value.withUTF8Buffer { putSignature(utf8: $0) }
    }

    /// `a…`: the length, padding to the elements' alignment (also when there
    /// are none), the elements `body` writes, then the length filled in.
    package mutating func array(elementAlignment: Int, _ body: (inout WireEncoder) throws(DBusError) -> Void)
        throws(DBusError)
    {
        makeUnique()
        let array = putArrayStart(elementAlignment)
        try body(&self)
        makeUnique()  // `body` may have kept a copy
        putArrayEnd(array)
    }

    /// The longest array the specification allows, in bytes.
    static let maximumArrayLength = 1 << 26

    /// `(…)` and `{…}`: 8-aligned, then the fields `body` writes.
    package mutating func structure(_ body: (inout WireEncoder) throws(DBusError) -> Void) throws(DBusError) {
        align(8)
        try body(&self)
    }

    /// An `a{ss}`, in the dictionary's order.
    package mutating func stringDictionary(_ dictionary: [String: String]) throws(DBusError) {
        makeUnique()
        putStringDictionary(dictionary)
    }

    /// An `as`.
    package mutating func strings(_ values: [String]) throws(DBusError) {
        makeUnique()
        putStrings(values)
    }

    /// Any value as its own type, as ``MessageWriter/appendValue(_:)`` writes
    /// it. File descriptors travel beside the bytes, which this cannot do.
    package mutating func value(_ value: DBusValue) throws(DBusError) {
        makeUnique()
        try putValue(value)
    }

    /// `v`: the value's signature, then the value.
    package mutating func variant(_ inner: DBusValue) throws(DBusError) {
        makeUnique()
        try putVariant(inner)
    }

    // MARK: Many writes, one check

    /// Runs `body` with a writer on these bytes: the buffer is made the
    /// encoder's own once, and each write of the writer only checks the
    /// capacity (a reply of a hundred entries made a hundred uniqueness
    /// checks; docs/performance.md, "The seventh round").
    package mutating func write<Result>(
        _ body: (inout WireWriter) throws(DBusError) -> Result
    ) throws(DBusError) -> Result {
        makeUnique()
        // The bytes move into the writer and back: a copy would share them.
        var writer = WireWriter(encoder: WireEncoder(placeholder: ()))
        swap(&writer.encoder, &self)
        defer { swap(&writer.encoder, &self) }
        return try body(&writer)
    }

    /// An `a{sv}` whose entries `body` writes.
    package mutating func vardict(_ body: (inout WireWriter) throws(DBusError) -> Void) throws(DBusError) {
        try write { (writer) throws(DBusError) in
            let array = writer.arrayStart(elementAlignment: 8)
            try body(&writer)
            writer.arrayEnd(array)
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

/// The fixed start of an `a{sv}` entry: the key as an `s` and the value's
/// signature as a `g`, in the bytes they are written with, made once per
/// key (a page keeps a table of its keys), so that writing an entry's head
/// is one copy of five words. An entry starts 8-aligned, so its head's
/// bytes never depend on what came before.
package struct VardictKey: Sendable {
    typealias Head = (UInt64, UInt64, UInt64, UInt64, UInt64)
    /// The most bytes a head has: a key of up to 32 bytes with a
    /// one-letter signature.
    static let capacity = MemoryLayout<Head>.size

    let head: Head
    let length: Int

    /// The head of `key` with values of type `signature`; with an empty
    /// signature, the key alone, for a value written with its own type
    /// (``WireWriter/variant(_:)``).
    package init(_ key: StaticString, _ signature: StaticString = "") {
        var head: Head = (0, 0, 0, 0, 0)
        var length = 0
        withUnsafeMutableBytes(of: &head) { bytes in
            func put(_ byte: UInt8) {
                precondition(length < bytes.count, "the key \(key) is too long for a VardictKey")
                bytes[length] = byte
                length += 1
            }
            let keyLength = key.utf8CodeUnitCount
            for shift in stride(from: 0, to: 32, by: 8) { put(UInt8(truncatingIfNeeded: keyLength >> shift)) }
            key.withUTF8Buffer { for byte in $0 { put(byte) } }
            put(0)
            if signature.utf8CodeUnitCount > 0 {
                put(UInt8(truncatingIfNeeded: signature.utf8CodeUnitCount))
                signature.withUTF8Buffer { for byte in $0 { put(byte) } }
                put(0)
            }
        }
        self.head = head
        self.length = length
    }
}

/// Writes into a ``WireEncoder``'s bytes, which are its own for as long as
/// it lives (``WireEncoder/write(_:)``): each write checks the capacity,
/// no more. Arrays are opened and closed (``arrayStart(elementAlignment:)``,
/// ``arrayEnd(_:)``) rather than written by a closure.
package struct WireWriter {
    fileprivate var encoder: WireEncoder

    /// Where an array's length goes and where its elements start.
    package struct ArrayStart {
        fileprivate let lengthAt: Int
        fileprivate let start: Int
    }

    /// Pads with zeros to a multiple of `alignment` (1, 2, 4 or 8).
    package mutating func align(_ alignment: Int) { encoder.putAlign(alignment) }
    /// `y`
    package mutating func byte(_ value: UInt8) { encoder.putByte(value) }
    /// `b`
    package mutating func bool(_ value: Bool) { encoder.putRaw(UInt32(value ? 1 : 0)) }
    /// `u`
    package mutating func uint32(_ value: UInt32) { encoder.putRaw(value) }
    /// `x`
    package mutating func int64(_ value: Int64) { encoder.putRaw(value) }
    /// `d`
    package mutating func double(_ value: Double) { encoder.putRaw(value.bitPattern) }
    /// `s`
    package mutating func string(_ value: String) { encoder.putString(value) }
    /// `as`
    package mutating func strings(_ values: [String]) { encoder.putStrings(values) }
    /// `a{ss}`, in the dictionary's order.
    package mutating func stringDictionary(_ dictionary: [String: String]) { encoder.putStringDictionary(dictionary) }
    /// Any value as its own type.
    package mutating func value(_ value: DBusValue) throws(DBusError) { try encoder.putValue(value) }
    /// `v`: the value's signature, then the value.
    package mutating func variant(_ value: DBusValue) throws(DBusError) { try encoder.putVariant(value) }

    /// An `a{sv}` entry's padding and head; the value follows.
    package mutating func entry(_ key: VardictKey) { encoder.putEntry(key) }

    /// The entry `key` (made with the signature `s`) → `value`.
    package mutating func string(_ key: VardictKey, _ value: String) {
        encoder.putEntry(key)
        encoder.putString(value)
    }

    /// The entry `key` (made with the signature `b`) → `value`.
    package mutating func bool(_ key: VardictKey, _ value: Bool) {
        encoder.putEntry(key)
        encoder.putRaw(UInt32(value ? 1 : 0))
    }

    /// The entry `key` (made with the signature `u`) → `value`.
    package mutating func uint32(_ key: VardictKey, _ value: UInt32) {
        encoder.putEntry(key)
        encoder.putRaw(value)
    }

    /// The entry `key` (made with the signature `d`) → `value`.
    package mutating func double(_ key: VardictKey, _ value: Double) {
        encoder.putEntry(key)
        encoder.putRaw(value.bitPattern)
    }

    /// Padding to 8, then `bytes` as they are: values another writer wrote
    /// from an 8-aligned start (an encoder's offset 0), such as whole
    /// `a{sv}` entries, whose padding is then the same here (no D-Bus type
    /// aligns to more than 8). The caller keeps them valid: they are not
    /// checked again (``WireEncoder/invalidity``).
    package mutating func preformatted(_ bytes: [UInt8]) {
        encoder.putAlign(8)
        bytes.withUnsafeBufferPointer { encoder.putBytes($0) }
    }

    /// Opens an array: its length, to be filled in by ``arrayEnd(_:)``,
    /// and padding to `elementAlignment`.
    package mutating func arrayStart(elementAlignment: Int) -> ArrayStart {
        encoder.putArrayStart(elementAlignment)
    }

    /// Closes `array`: its length filled in.
    package mutating func arrayEnd(_ array: ArrayStart) { encoder.putArrayEnd(array) }

    /// How many bytes the encoder holds.
    package var count: Int { encoder.count }
}

extension WireEncoder {
    /// Hands `body` the bytes written so far.
    package func withUnsafeBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(storage) { try body(UnsafeBufferPointer(start: base, count: count)) }
    }
}

/// An encoder is a value whose bytes are copied before a write whenever
/// another copy shares them (``WireEncoder/makeUnique()``, as an array
/// does), so copies may live on different threads.
extension WireEncoder: @unchecked Sendable {}

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
    /// The fixed header and the header fields, a multiple of 8 long:
    /// written for this message, or a reply's, made from a template
    /// (``ReplyHeaderTemplate``). The send path copies them once, into its
    /// queue, as it does the body.
    let header: Header
    /// The arguments, in the encoder that wrote them (not copied into an
    /// array: the send path copies them once, into its queue).
    package let body: WireEncoder

    enum Header: Sendable {
        /// Written for this message (in the encoder that wrote it).
        case written(WireEncoder)
        /// A method return's: its template's bytes, with the body's length,
        /// the serial and the reply serial put in.
        case reply(ReplyHeaderTemplate, serial: UInt32, replySerial: UInt32)
    }

    /// The whole message.
    package var bytes: [UInt8] {
        var bytes: [UInt8] = []
        appendHeader(to: &bytes)
        body.withUnsafeBytes { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Appends the header's bytes to `bytes` (the send path's queue).
    func appendHeader(to bytes: inout [UInt8]) {
        switch header {
        case .written(let header):
            header.withUnsafeBytes { bytes.append(contentsOf: $0) }
        case .reply(let template, let serial, let replySerial):
            let start = bytes.count
            bytes.append(contentsOf: template.bytes)
            let length = UInt32(truncatingIfNeeded: body.count)
            bytes.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: length.littleEndian, toByteOffset: start + 4, as: UInt32.self)
                raw.storeBytes(of: serial.littleEndian, toByteOffset: start + 8, as: UInt32.self)
                raw.storeBytes(of: replySerial.littleEndian, toByteOffset: start + ReplyHeaderTemplate.replySerialOffset, as: UInt32.self)
            }
        }
    }

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

    /// The header is written in one encoder: the fixed part, then the
    /// header fields `fields` writes as an array whose length is filled in
    /// afterwards, then the signature's field.
    init(
        type: MessageType, signature: Signature, body: WireEncoder, fields: (inout WireEncoder) -> Void
    ) throws(DBusError) {
        let header = Self.header(type: type, serial: Self.nextSerial(), bodyLength: body.count, signature: signature, fields: fields)
        if let reason = body.invalidity ?? header.invalidity { throw .invalidArgs("the message is not valid D-Bus: \(reason)") }
        try Self.checkLength(header.count, body)
        self.header = .written(header)
        self.body = body
    }

    /// A reply from its template: the body's validity and length are
    /// checked here, the header's were when the template was made.
    private init(template: ReplyHeaderTemplate, replySerial: UInt32, body: WireEncoder) throws(DBusError) {
        if let reason = body.invalidity { throw .invalidArgs("the message is not valid D-Bus: \(reason)") }
        try Self.checkLength(template.bytes.count, body)
        header = .reply(template, serial: Self.nextSerial(), replySerial: replySerial)
        self.body = body
    }

    private static func checkLength(_ headerLength: Int, _ body: WireEncoder) throws(DBusError) {
        guard headerLength + body.count <= maximumLength else {
            throw DBusError(.limitsExceeded, "the message is longer than the 128 MiB D-Bus allows")
        }
    }

    /// The fixed part, the fields `fields` writes, the signature's field.
    fileprivate static func header(
        type: MessageType, serial: UInt32, bodyLength: Int, signature: Signature, fields: (inout WireEncoder) -> Void
    ) -> WireEncoder {
        var header = WireEncoder(capacity: 256)
        header.byte(UInt8(ascii: "l"))
        header.byte(UInt8(truncatingIfNeeded: type.rawValue))
        header.byte(0x1)  // NO_REPLY_EXPECTED, as libdbus sets on replies and signals
        header.byte(1)  // protocol version
        header.uint32(UInt32(truncatingIfNeeded: bodyLength))
        header.uint32(serial)
        // The fields are an `a(yv)`: their length at offset 12, the first at 16.
        let array = header.putArrayStart(8)
        fields(&header)
        if !signature.rawValue.isEmpty { header.headerField(8, "g") { $0.signature(signature.rawValue) } }
        header.putArrayEnd(array)
        header.align(8)
        return header
    }

    /// A method return for `call` whose arguments `body` holds with `signature`.
    package static func methodReturn(to call: Message, signature: Signature, body: WireEncoder) throws(DBusError) -> WireMessage {
        precondition(call.serial != 0, "a reply needs a call that was sent (its serial is 0)")
        return try methodReturn(replyingTo: call.serial, destination: call.sender, signature: signature, body: body)
    }

    /// An error reply to `call`: its name, and its message as the one argument.
    package static func error(_ error: DBusError, to call: Message) throws(DBusError) -> WireMessage {
        precondition(call.serial != 0, "a reply needs a call that was sent (its serial is 0)")
        return try self.error(error, replyingTo: call.serial, destination: call.sender)
    }

    /// A method return to the call numbered `serial` from `destination`:
    /// its header from the template for `destination` and `signature`.
    static func methodReturn(
        replyingTo serial: UInt32, destination: BusName?, signature: Signature, body: WireEncoder
    ) throws(DBusError) -> WireMessage {
        try WireMessage(template: try ReplyHeaderTemplate.for(destination, signature), replySerial: serial, body: body)
    }

    /// A method return's fields: the reply serial, then the destination.
    fileprivate static func replyFields(_ serial: UInt32, _ destination: BusName?) -> (inout WireEncoder) -> Void {
        { fields in
            fields.headerField(5, "u") { $0.uint32(serial) }  // REPLY_SERIAL
            if let destination { fields.headerField(6, "s") { $0.string(destination.rawValue) } }  // DESTINATION
        }
    }

    /// An error reply to the call numbered `serial` from `destination`.
    static func error(_ error: DBusError, replyingTo serial: UInt32, destination: BusName?) throws(DBusError) -> WireMessage {
        var body = WireEncoder(capacity: error.message.utf8.count + 5)
        body.string(error.message)
        return try WireMessage(type: .error, signature: .string, body: body) { fields in
            fields.headerField(4, "s") { $0.string(error.name.rawValue) }  // ERROR_NAME
            fields.headerField(5, "u") { $0.uint32(serial) }  // REPLY_SERIAL
            if let destination { fields.headerField(6, "s") { $0.string(destination.rawValue) } }  // DESTINATION
        }
    }

    /// A signal whose arguments `body` holds with `signature`; `destination` unicasts it.
    package static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, destination: BusName?, signature: Signature,
        body: WireEncoder
    ) throws(DBusError) -> WireMessage {
        try WireMessage(type: .signal, signature: signature, body: body) { fields in
            fields.headerField(1, "o") { $0.string(path.rawValue) }  // PATH
            fields.headerField(2, "s") { $0.string(interface.rawValue) }  // INTERFACE
            fields.headerField(3, "s") { $0.string(member.rawValue) }  // MEMBER
            if let destination { fields.headerField(6, "s") { $0.string(destination.rawValue) } }
        }
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

/// A method return's header for one destination and reply signature, with
/// zeros for the body's length, the serial and the reply serial, which the
/// send path puts in (``WireMessage/appendHeader(to:)``). A reply's header
/// differs from the last one to the same caller with the same signature
/// only in those numbers: writing its fields cost about 1 k instructions
/// per reply (docs/performance.md, H2). The few most recent are kept.
final class ReplyHeaderTemplate: Sendable {
    let destination: BusName?
    let signature: Signature
    let bytes: [UInt8]

    /// Where the reply serial is: the first field (code, `g` "u") at 16,
    /// its value 4-aligned after it.
    static let replySerialOffset = 20

    private init(destination: BusName?, signature: Signature) throws(DBusError) {
        let header = WireMessage.header(
            type: .methodReturn, serial: 0, bodyLength: 0, signature: signature,
            fields: WireMessage.replyFields(0, destination))
        if let reason = header.invalidity { throw .invalidArgs("the message is not valid D-Bus: \(reason)") }
        self.destination = destination
        self.signature = signature
        bytes = header.bytes
    }

    func matches(_ destination: BusName?, _ signature: Signature) -> Bool {
        self.destination == destination && self.signature == signature
    }

    /// The templates made last (the oldest at ``Recent/next`` once all
    /// are used), and the one used last, which is looked at first: a
    /// caller's calls come in runs.
    private struct Recent {
        var templates: [ReplyHeaderTemplate] = []
        var next = 0
        var last = 0

        mutating func find(_ destination: BusName?, _ signature: Signature) -> ReplyHeaderTemplate? {
            if last < templates.count, templates[last].matches(destination, signature) { return templates[last] }
            for index in templates.indices where templates[index].matches(destination, signature) {
                last = index
                return templates[index]
            }
            return nil
        }

        mutating func add(_ template: ReplyHeaderTemplate) {
            if templates.count < ReplyHeaderTemplate.capacity {
                templates.append(template)
            } else {
                templates[next] = template
            }
            last = next
            next = (next + 1) % ReplyHeaderTemplate.capacity
        }
    }

    private static let capacity = 8
    private static let recent = Mutex(Recent())

    /// The template for `destination` and `signature`: a recent one, or a
    /// new one that replaces the oldest.
    static func `for`(_ destination: BusName?, _ signature: Signature) throws(DBusError) -> ReplyHeaderTemplate {
        if let found = recent.withLock({ $0.find(destination, signature) }) { return found }
        let made = try ReplyHeaderTemplate(destination: destination, signature: signature)
        recent.withLock { $0.add(made) }
        return made
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
