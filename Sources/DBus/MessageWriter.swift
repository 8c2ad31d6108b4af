import FlowdSystem

/// Appends arguments to a message (`dbus_message_iter_append_*`).
///
/// ```swift
/// var args = reply.appender()
/// try args.append(errors)          // [String: String] → a{ss}
/// try args.appendValue(.uint32(3)) // any DBusValue, as its own type
/// ```
///
/// Values are checked before anything is written: strings must not contain
/// NUL, array elements must match the array's element type, dictionary keys
/// must be basic, and nesting is bounded like reading.
package struct MessageWriter {
    private let message: Message
    private var iter = LibDBus.MessageIterator()
    private let depth: Int

    init(message: Message) {
        self.message = message
        self.depth = 0
        LibDBus.iterInitAppend(message.raw, &iter)
    }

    private init(message: Message, depth: Int) {
        self.message = message
        self.depth = depth
    }

    /// Appends `value` with its type's signature.
    package mutating func append<T: DBusRepresentable>(_ value: T) throws(DBusError) {
        try value.write(to: &self)
    }

    /// Appends `value` as its own type (a `.variant` as a variant, an
    /// `.array` as an array, and so on).
    package mutating func appendValue(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .byte(let v): appendFixed(v)
        case .bool(let v): appendBool(v)
        case .int16(let v): appendFixed(v)
        case .uint16(let v): appendFixed(v)
        case .int32(let v): appendFixed(v)
        case .uint32(let v): appendFixed(v)
        case .int64(let v): appendFixed(v)
        case .uint64(let v): appendFixed(v)
        case .double(let v): appendFixed(v)
        case .string(let v): try appendString(v, type: TypeCode.string)
        case .objectPath(let v): try appendString(v.rawValue, type: TypeCode.objectPath)
        case .signature(let v): try appendString(v.rawValue, type: TypeCode.signature)
        case .unixFD(let v): appendUnixFD(v)
        case .variant(let inner):
            // libdbus treats an invalid contained signature as a programming
            // error (a fatal warning), so check a container's here first; a
            // basic type's one-letter signature is valid by construction.
            let signature = inner.signature.rawValue
            if signature.utf8.count > 1 {
                guard ValidSignatures.isSingleCompleteType(signature) else {
                    throw .invalidArgs("variant holds a value of invalid type '\(signature)' (too long or nested too deep)")
                }
            }
            try withContainer(TypeCode.variant, contained: signature) { (sub) throws(DBusError) in
                try sub.appendValue(inner)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("a struct needs at least one field") }
            try withContainer(TypeCode.structure, contained: nil) { (sub) throws(DBusError) in
                for field in fields { try sub.appendValue(field) }
            }
        case .array(let elementType, let items):
            guard ValidSignatures.isSingleCompleteType(elementType.rawValue) else {
                throw .invalidArgs("array element type '\(elementType)' is not a single complete type")
            }
            for item in items where !item.hasType(elementType) {
                throw .invalidArgs("array of '\(elementType)' holds a '\(item.signature)'")
            }
            if elementType == .byte {
                appendByteArray(items.map { $0.byte ?? 0 })
                return
            }
            try withContainer(TypeCode.array, contained: elementType.rawValue) { (sub) throws(DBusError) in
                for item in items { try sub.appendValue(item) }
            }
        case .dictionary(let keyType, let valueType, let entries):
            let entryType = "{" + keyType.rawValue + valueType.rawValue + "}"
            // Validating "a{kv}" checks that the key is basic and the value single.
            let dictionaryType = "a" + entryType
            guard ValidSignatures.isSingleCompleteType(dictionaryType) else {
                _ = try Signature(dictionaryType)  // the precise reason
                throw .invalidArgs("invalid dictionary type '\(dictionaryType)'")
            }
            for entry in entries {
                guard entry.key.hasType(keyType), entry.value.hasType(valueType) else {
                    throw .invalidArgs(
                        "dictionary of '\(keyType)' to '\(valueType)' holds '\(entry.key.signature)' to '\(entry.value.signature)'")
                }
            }
            try withContainer(TypeCode.array, contained: entryType) { (sub) throws(DBusError) in
                for entry in entries {
                    try sub.withContainer(TypeCode.dictEntry, contained: nil) { (pair) throws(DBusError) in
                        try pair.appendValue(entry.key)
                        try pair.appendValue(entry.value)
                    }
                }
            }
        }
    }

    /// Appends every value in order.
    package mutating func appendValues(_ values: [DBusValue]) throws(DBusError) {
        for value in values { try appendValue(value) }
    }

    // MARK: internals used by the conformances

    /// Opens a container, lets `body` fill it, and closes it; abandons it when
    /// `body` throws, so the message stays consistent.
    mutating func withContainer(
        _ type: Int32, contained: String?, _ body: (inout MessageWriter) throws(DBusError) -> Void
    ) throws(DBusError) {
        guard depth < MessageReader.maximumDepth else {
            throw .invalidArgs("values nested deeper than \(MessageReader.maximumDepth) containers")
        }
        var sub = MessageWriter(message: message, depth: depth + 1)
        LibDBus.iterOpen(&iter, type, contained, &sub.iter)
        do throws(DBusError) {
            try body(&sub)
        } catch {
            LibDBus.iterAbandon(&iter, &sub.iter)
            throw error
        }
        LibDBus.iterClose(&iter, &sub.iter)
    }

    mutating func appendFixed<T: FixedBasic>(_ value: T) {
        var value = value
        withUnsafePointer(to: &value) { LibDBus.iterAppendBasic(&iter, T.typeCode, UnsafeRawPointer($0)) }
    }

    mutating func appendBool(_ value: Bool) {
        var raw: LibDBus.Bool32 = value ? 1 : 0
        LibDBus.iterAppendBasic(&iter, TypeCode.boolean, &raw)
    }

    /// Strings, object paths and signatures; the latter two are valid by type.
    mutating func appendString(_ value: String, type: Int32) throws(DBusError) {
        var copy = value
        // libdbus reads a C string: an embedded NUL would silently cut it.
        if copy.withUTF8({ $0.contains(0) }) { throw .invalidArgs("strings must not contain NUL characters") }
        copy.withCString { pointer in
            var pointer: UnsafePointer<CChar>? = pointer
            LibDBus.iterAppendBasic(&iter, type, &pointer)
        }
    }

    /// An `a{ss}`, in the dictionary's order.
    mutating func appendStringDictionary(_ dictionary: [String: String]) throws(DBusError) {
        try withContainer(TypeCode.array, contained: "{ss}") { (entries) throws(DBusError) in
            for (key, value) in dictionary {
                try entries.withContainer(TypeCode.dictEntry, contained: nil) { (entry) throws(DBusError) in
                    try entry.appendString(key, type: TypeCode.string)
                    try entry.appendString(value, type: TypeCode.string)
                }
            }
        }
    }

    mutating func appendUnixFD(_ value: UnixFD) {
        var fd = value.fileDescriptor  // libdbus duplicates it into the message
        LibDBus.iterAppendBasic(&iter, TypeCode.unixFD, &fd)
    }

    /// An `ay` in one copy (`dbus_message_iter_append_fixed_array`).
    mutating func appendByteArray(_ bytes: [UInt8]) {
        var sub = MessageWriter(message: message, depth: depth + 1)
        LibDBus.iterOpen(&iter, TypeCode.array, "y", &sub.iter)
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress {
                LibDBus.iterAppendFixedArray(&sub.iter, TypeCode.byte, base, bytes.count)
            }
        }
        LibDBus.iterClose(&iter, &sub.iter)
    }
}

/// Signatures already found to be one valid complete type
/// (`dbus_signature_validate_single`), remembered so the writer checks each
/// distinct signature once per process instead of at every container it
/// writes: a program writes a handful of distinct types, and the check
/// allocates inside libdbus. Bounded, since values can come from callers.
enum ValidSignatures {
    private static let known = LockedValue<Set<String>>([])
    private static let capacity = 1024

    /// True when `signature` is exactly one valid complete type.
    static func isSingleCompleteType(_ signature: String) -> Bool {
        if known.withLock({ $0.contains(signature) }) { return true }
        guard Signature(trusted: signature).isSingleCompleteType else { return false }
        known.withLock { set in
            if set.count < capacity { set.insert(signature) }
        }
        return true
    }
}
