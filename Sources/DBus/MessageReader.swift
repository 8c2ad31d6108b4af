
/// Reads a message's arguments in order (`dbus_message_iter_*`).
///
/// ```swift
/// var args = message.arguments()
/// let answers = try args.next([String: DBusValue].self)   // a{sv}
/// ```
///
/// Typed reads check the argument's signature first and throw
/// `InvalidArgs` on a mismatch. Nesting deeper than ``maximumDepth``
/// containers is refused rather than followed.
package struct MessageReader {
    /// The deepest container nesting a reader follows. The specification
    /// allows 32 nested arrays plus 32 nested structs; variants count too.
    package static let maximumDepth = 64

    private let message: Message
    /// libdbus' iterator, for a message libdbus holds.
    private var iter = LibDBus.MessageIterator()
    /// The bytes, for a message flowd read itself (``Message/init(received:)``).
    private var body = BodyReader.none
    private let fromBytes: Bool
    private let depth: Int
    private var index = 0

    init(message: Message) {
        self.message = message
        self.depth = 0
        self.fromBytes = false
        if !LibDBus.iterInit(message.raw, &iter) {
            // No arguments: a zeroed iterator would be invalid, so mark the end.
            isEmptyMessage = true
        }
    }

    /// A reader of a received message's checked bytes.
    init(message: Message, body: BodyReader) {
        self.message = message
        self.body = body
        self.fromBytes = true
        self.depth = 0
    }

    private init(parent: Message, iter: LibDBus.MessageIterator, depth: Int) {
        self.message = parent
        self.iter = iter
        self.depth = depth
        self.fromBytes = false
    }

    private init(parent: Message, body: BodyReader, depth: Int) {
        self.message = parent
        self.body = body
        self.depth = depth
        self.fromBytes = true
    }

    private var isEmptyMessage = false

    /// The type code of the current argument (`TypeCode.invalid` at the end).
    var currentType: Int32 {
        if fromBytes { return body.currentType }
        if isEmptyMessage { return TypeCode.invalid }
        var copy = iter  // libdbus takes a non-const pointer even to peek
        return LibDBus.iterArgType(&copy)
    }

    /// The complete type of the current argument, as text.
    private mutating func currentSignature() -> String {
        if fromBytes { return String(decoding: body.currentSignature, as: UTF8.self) }
        return LibDBus.iterSignature(&iter)
    }

    /// True when every argument (of this container) has been read.
    package var isAtEnd: Bool {
        currentType == TypeCode.invalid
    }

    /// Reads the next argument as a `T`, after checking its type.
    package mutating func next<T: DBusRepresentable>(_ type: T.Type = T.self) throws(DBusError) -> T {
        try expect(T.dbusSignature)
        return try T.read(from: &self)
    }

    /// Reads the next argument as whatever type it has.
    package mutating func nextValue() throws(DBusError) -> DBusValue {
        let type = currentType
        switch type {
        case TypeCode.invalid: throw .invalidArgs("argument \(index + 1) is missing")
        case TypeCode.byte: return .byte(try readFixed(UInt8.self))
        case TypeCode.boolean: return .bool(try readBool())
        case TypeCode.int16: return .int16(try readFixed(Int16.self))
        case TypeCode.uint16: return .uint16(try readFixed(UInt16.self))
        case TypeCode.int32: return .int32(try readFixed(Int32.self))
        case TypeCode.uint32: return .uint32(try readFixed(UInt32.self))
        case TypeCode.int64: return .int64(try readFixed(Int64.self))
        case TypeCode.uint64: return .uint64(try readFixed(UInt64.self))
        case TypeCode.double: return .double(try readFixed(Double.self))
        case TypeCode.string: return .string(try readString())
        case TypeCode.objectPath: return .objectPath(ObjectPath(trusted: try readString()))
        case TypeCode.signature: return .signature(Signature(trusted: try readString()))
        case TypeCode.unixFD: return .unixFD(try readUnixFD())
        case TypeCode.variant:
            var inner = try enterContainer()
            return .variant(try inner.nextValue())
        case TypeCode.structure:
            var inner = try enterContainer()
            var fields: [DBusValue] = []
            while !inner.isAtEnd { fields.append(try inner.nextValue()) }
            return .structure(fields)
        case TypeCode.array:
            let signature = currentSignature()
            let element = Signature(trusted: String(signature.dropFirst()))
            var inner = try enterContainer()
            if signature.utf8.dropFirst().first == UInt8(ascii: "{") {
                let types = Signature(trusted: String(element.rawValue.dropFirst().dropLast())).completeTypes
                guard types.count == 2 else { throw .invalidArgs("malformed dict entry type \(element)") }
                var entries: [DBusDictEntry] = []
                while !inner.isAtEnd {
                    var entry = try inner.enterContainer()
                    let key = try entry.nextValue()
                    let value = try entry.nextValue()
                    entries.append(DBusDictEntry(key: key, value: value))
                }
                return .dictionary(keyType: types[0], valueType: types[1], entries)
            }
            var items: [DBusValue] = []
            while !inner.isAtEnd { items.append(try inner.nextValue()) }
            return .array(elementType: element, items)
        default:
            throw .invalidArgs("argument \(index + 1) has unsupported type \(TypeCode.name(type))")
        }
    }

    /// Reads every remaining argument.
    package mutating func readAll() throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while !isAtEnd { values.append(try nextValue()) }
        return values
    }

    /// Skips the current argument.
    package mutating func skip() {
        guard !isAtEnd else { return }
        if fromBytes {
            // The bytes were checked when the message was made; a container is
            // passed over as entering it does.
            try? body.skipCurrent()
            index += 1
            return
        }
        advance()
    }

    // MARK: internals used by the conformances

    /// Throws unless the current argument has type `signature`.
    mutating func expect(_ signature: Signature) throws(DBusError) {
        let wanted = signature.rawValue.utf8
        let actual = currentType
        if wanted.count == 1, let code = wanted.first {
            // Basic types and variants: one code to compare, no allocation.
            if actual == Int32(code) { return }
        } else if actual == TypeCode.array || actual == TypeCode.structure {
            if fromBytes ? body.currentTypeIs(signature) : LibDBus.iterSignature(&iter) == signature.rawValue { return }
        }
        let got = actual == TypeCode.invalid ? "nothing" : "'\(currentSignature())'"
        throw .invalidArgs("argument \(index + 1): expected '\(signature)', got \(got)")
    }

    private mutating func advance() {
        LibDBus.iterNext(&iter)
        index += 1
    }

    /// A reader for the contents of the current container (array, struct,
    /// dict entry or variant); advances past it.
    mutating func enterContainer() throws(DBusError) -> MessageReader {
        guard depth < Self.maximumDepth else {
            throw .invalidArgs("values nested deeper than \(Self.maximumDepth) containers")
        }
        if fromBytes {
            let inner = try body.enterContainer()
            index += 1
            return MessageReader(parent: message, body: inner, depth: depth + 1)
        }
        var sub = LibDBus.MessageIterator()
        LibDBus.iterRecurse(&iter, &sub)
        advance()
        return MessageReader(parent: message, iter: sub, depth: depth + 1)
    }

    mutating func readFixed<T: FixedBasic>(_ type: T.Type) throws(DBusError) -> T {
        if fromBytes {
            index += 1
            return try body.fixed(T.self)
        }
        var value = T()
        withUnsafeMutablePointer(to: &value) { LibDBus.iterGetBasic(&iter, UnsafeMutableRawPointer($0)) }
        advance()
        return value
    }

    mutating func readBool() throws(DBusError) -> Bool {
        if fromBytes {
            index += 1
            return try body.bool()
        }
        var value: LibDBus.Bool32 = 0
        LibDBus.iterGetBasic(&iter, &value)
        advance()
        return value != 0
    }

    /// A string, object path or signature.
    mutating func readString() throws(DBusError) -> String {
        if fromBytes {
            index += 1
            return try body.string()
        }
        var pointer: UnsafePointer<CChar>?
        withUnsafeMutablePointer(to: &pointer) { LibDBus.iterGetBasic(&iter, $0) }
        advance()
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// A duplicate of the descriptor the argument names, which the caller owns.
    mutating func readUnixFD() throws(DBusError) -> UnixFD {
        if fromBytes {
            index += 1
            let fds = message.receivedFDs
            let position = try body.fileDescriptorIndex()
            guard position < fds.count else { throw .inconsistentMessage("file descriptor \(position) is missing") }
            do {
                return UnixFD(owning: try fds[position].duplicate())
            } catch {
                throw .failed("cannot duplicate the file descriptor of argument \(index): \(error.errno)")
            }
        }
        var fd: Int32 = -1
        LibDBus.iterGetBasic(&iter, &fd)  // libdbus returns a duplicate we own
        advance()
        return UnixFD(adopting: fd)
    }

    /// An `a{sv}` (already type-checked), values unwrapped from their variants.
    ///
    /// - Throws: `InvalidArgs` for a key that appears twice (``duplicateKey(_:)``).
    mutating func readVardict() throws(DBusError) -> [String: DBusValue] {
        var entries = try enterContainer()
        var result: [String: DBusValue] = [:]
        while !entries.isAtEnd {
            var entry = try entries.enterContainer()
            let key = try entry.readString()
            var variant = try entry.enterContainer()
            if result.updateValue(try variant.nextValue(), forKey: key) != nil { throw Self.duplicateKey(key) }
        }
        return result
    }

    /// The next argument, an `a{sv}`, entry by entry: `entry` gets each key
    /// and a reader of its value (inside the variant), in the message's
    /// order, and may read the value or leave it. For a caller that turns
    /// the values into its own types: no `[String: DBusValue]` is made.
    /// Duplicate keys are the caller's to refuse (``duplicateKeyError(_:)``).
    package mutating func nextVardict(
        _ entry: (String, inout MessageReader) throws(DBusError) -> Void
    ) throws(DBusError) {
        try expect(Self.vardict)
        var entries = try enterContainer()
        while !entries.isAtEnd {
            var pair = try entries.enterContainer()
            let key = try pair.readString()
            var value = try pair.enterContainer()
            try entry(key, &value)
        }
    }

    /// `a{sv}`, made once (a literal is validated each time it is made).
    private static let vardict: Signature = "a{sv}"

    /// The type code of the current argument (the first character of its
    /// signature: `s`, `a`, `v`…; `r` for a struct, `e` for a dict entry, as
    /// libdbus says), or nil at the end.
    package var nextTypeCode: UInt8? {
        let type = currentType
        return type == TypeCode.invalid ? nil : UInt8(truncatingIfNeeded: type)
    }

    /// True when the current argument's complete type is `signature`.
    package mutating func nextIs(_ signature: Signature) -> Bool {
        if fromBytes { return body.currentTypeIs(signature) }
        return !isAtEnd && LibDBus.iterSignature(&iter) == signature.rawValue
    }

    /// The error a typed read throws for a dictionary key that appears twice.
    package static func duplicateKeyError(_ key: String) -> DBusError { duplicateKey(key) }

    /// An `a{ss}` (already type-checked).
    ///
    /// - Throws: `InvalidArgs` for a key that appears twice (``duplicateKey(_:)``).
    mutating func readStringDictionary() throws(DBusError) -> [String: String] {
        var entries = try enterContainer()
        var result: [String: String] = [:]
        while !entries.isAtEnd {
            var entry = try entries.enterContainer()
            let key = try entry.readString()
            if result.updateValue(try entry.readString(), forKey: key) != nil { throw Self.duplicateKey(key) }
        }
        return result
    }

    /// The error for a dictionary that names a key twice. Typed reads refuse
    /// it rather than keep one of the values: a caller that sends
    /// `{service: website, service: other}` has a bug, and picking a value
    /// for it would hide that.
    static func duplicateKey(_ key: some Hashable) -> DBusError {
        .invalidArgs("the key \"\(key)\" appears twice in a dictionary")
    }

    /// An `ay` read in one copy (`dbus_message_iter_get_fixed_array`).
    mutating func readByteArray() throws(DBusError) -> [UInt8] {
        if fromBytes {
            index += 1
            return try body.byteArray()
        }
        var sub = LibDBus.MessageIterator()
        LibDBus.iterRecurse(&iter, &sub)
        let bytes = Array(LibDBus.iterFixedArray(&sub))
        advance()
        return bytes
    }
}
