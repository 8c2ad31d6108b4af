
/// What the typed D-Bus names share: a validated string.
///
/// Runtime strings go through the throwing `init(_:)`. String literals are
/// accepted too, for the constant names a program is written with; an invalid
/// literal is a programming error and traps (the first test that touches it
/// finds it).
package protocol ValidatedName: RawRepresentable<String>, Hashable, Sendable, Comparable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    /// Checks `string` against the specification's rules for this kind of name.
    static func validate(_ string: String) -> DBusError?
    /// True when `bytes` (UTF-8, no NUL after them) are a valid name of this
    /// kind: the rules checked in Swift, as libdbus' validator applies them
    /// (every valid name is ASCII without NUL).
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Wraps a string already known to be valid.
    init(trusted: String)
}

extension ValidatedName {
    /// Validates `string`; throws `org.freedesktop.DBus.Error.InvalidArgs` with
    /// libdbus' explanation when it breaks the rules.
    package init(_ string: String) throws(DBusError) {
        if let error = Self.validate(string) { throw error }
        self.init(trusted: string)
    }

    /// Validates `rawValue`; nil when it breaks the rules.
    package init?(rawValue: String) {
        guard Self.validate(rawValue) == nil else { return nil }
        self.init(trusted: rawValue)
    }

    /// A literal name; traps when the literal is invalid.
    package init(stringLiteral value: String) {
        if let error = Self.validate(value) {
            preconditionFailure("invalid \(Self.self) literal \"\(value)\": \(error.message)")
        }
        self.init(trusted: value)
    }

    package var description: String { rawValue }

    /// True when the bytes of `string` are a valid name of this kind.
    static func isValid(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { isValid(UnsafeRawBufferPointer($0)) }
    }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why `string` is not a valid `kind`, nil when it is. Checked in Swift
/// (the type's `isValid` on the bytes: some 100 instructions, where
/// libdbus' validator through a C string cost some 400); the validator
/// `libdbus` is asked only about a name the Swift check refused, for its
/// reason. It reads a C string, which ends at the first NUL: a name with a
/// NUL inside is refused whatever libdbus says of the part before it.
func refusal<Name: ValidatedName>(
    _ type: Name.Type, _ kind: String, _ string: String, _ libdbus: (String) -> DBusError?
) -> (kind: String, reason: String)? {
    if Name.isValid(string) { return nil }
    if let error = libdbus(string) { return (kind, error.message) }
    if string.utf8.contains(0) { return (kind, "it contains a NUL byte") }
    return nil
}

/// Turns a refusal into `InvalidArgs` naming the kind of name.
private func invalid(_ string: String, _ refusal: (kind: String, reason: String)?) -> DBusError? {
    guard let refusal else { return nil }
    return .invalidArgs("invalid \(refusal.kind) \"\(string)\": \(refusal.reason)")
}

/// The specification's rules for names, on their bytes, step by step as
/// libdbus applies them (`_dbus_validate_path`, `_dbus_validate_interface`,
/// `_dbus_validate_member`, `_dbus_validate_bus_name`): what a name may hold
/// is ASCII, so each byte is looked at once and no string is needed.
enum NameRules {
    /// True when the `count` bytes at `a` and `b` are equal: eight at a
    /// time (every call to a tree's object compares its prefix, the framer
    /// each name with the last one of its field).
    static func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        var index = 0
        while index &+ 8 <= count {
            guard a.loadUnaligned(fromByteOffset: index, as: UInt64.self) == b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            else { return false }
            index &+= 8
        }
        while index < count {
            guard a.load(fromByteOffset: index, as: UInt8.self) == b.load(fromByteOffset: index, as: UInt8.self) else { return false }
            index &+= 1
        }
        return true
    }

    /// True when `a` and `b` hold the same bytes.
    static func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let first = a.baseAddress, let second = b.baseAddress else { return a.count == 0 }
        return bytesEqual(first, second, count: a.count)
    }

    /// The longest interface, member, error or bus name (object paths have no limit).
    static let maximumLength = 255

    /// `[A-Za-z_]`: an element's first byte.
    @inline(__always)
    static func isInitial(_ byte: UInt8) -> Bool {
        let folded = byte | 0x20  // 'A'...'Z' onto 'a'...'z'; no other byte lands there
        return (folded >= UInt8(ascii: "a") && folded <= UInt8(ascii: "z")) || byte == UInt8(ascii: "_")
    }

    /// `[A-Za-z0-9_]`
    @inline(__always)
    static func isElement(_ byte: UInt8) -> Bool {
        isInitial(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// `[A-Za-z_-]`: a bus name element's first byte.
    @inline(__always)
    static func isBusInitial(_ byte: UInt8) -> Bool { isInitial(byte) || byte == UInt8(ascii: "-") }

    /// `[A-Za-z0-9_-]`
    @inline(__always)
    static func isBusElement(_ byte: UInt8) -> Bool { isElement(byte) || byte == UInt8(ascii: "-") }

    /// An object path: `/`, or `/` and elements of `[A-Za-z0-9_]` joined by
    /// `/`, none empty, no `/` at the end. Any length.
    ///
    /// Every call to a session checks its path (some 60 bytes): eight bytes
    /// at a time, 330 instructions instead of 720 byte by byte. An empty
    /// element is a `/` after a `/`, or one at the end.
    static func isPath(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count > 0, bytes[0] == UInt8(ascii: "/") else { return false }
        guard count > 1 else { return true }
        guard bytes[count - 1] != UInt8(ascii: "/") else { return false }
        var afterSlash = true
        var index = 1
        while index + 8 <= count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            guard let slashes = Self.pathBytes(word) else { return false }
            // A `/` whose byte before it (in this word, or the last of the
            // one before) is a `/` too.
            let before = (slashes << 8) | (afterSlash ? Self.highBits & 0xFF : 0)
            guard slashes & before == 0 else { return false }
            afterSlash = slashes >> 63 != 0
            index += 8
        }
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/") {
                guard !afterSlash else { return false }
                afterSlash = true
            } else {
                guard isElement(byte) else { return false }
                afterSlash = false
            }
            index += 1
        }
        return true
    }

    /// The high bit of every byte of a word.
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// For eight bytes of a path read as a little-endian word: nil unless
    /// every byte is one of `[A-Za-z0-9_/]`, else the high bit of each byte
    /// that is `/`.
    @inline(__always)
    private static func pathBytes(_ word: UInt64) -> UInt64? {
        guard word & highBits == 0 else { return nil }
        // For an ASCII byte x, x + (0x80 - lo) has its high bit set exactly
        // when x >= lo, and x + (0x7F - hi) when x > hi; neither carries
        // into the next byte.
        @inline(__always)
        func within(_ lo: UInt8, _ hi: UInt8) -> UInt64 {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let atLeast = word &+ UInt64(0x80 - lo) &* ones
            let above = word &+ UInt64(0x7F - hi) &* ones
            return atLeast & ~above & highBits
        }
        let slashes = within(UInt8(ascii: "/"), UInt8(ascii: "/"))
        let allowed = slashes | within(UInt8(ascii: "0"), UInt8(ascii: "9")) | within(UInt8(ascii: "A"), UInt8(ascii: "Z"))
            | within(UInt8(ascii: "a"), UInt8(ascii: "z")) | within(UInt8(ascii: "_"), UInt8(ascii: "_"))
        return allowed == highBits ? slashes : nil
    }

    /// An interface or error name: at most 255 bytes, two or more elements
    /// joined by `.`, each `[A-Za-z_][A-Za-z0-9_]*`.
    static func isDotted(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maximumLength, isInitial(bytes[0]) else { return false }
        var dotted = false
        var index = 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                guard index + 1 < bytes.count, isInitial(bytes[index + 1]) else { return false }
                dotted = true
                index += 2
            } else {
                guard isElement(byte) else { return false }
                index += 1
            }
        }
        return dotted
    }

    /// A member name: at most 255 bytes, `[A-Za-z_][A-Za-z0-9_]*`.
    static func isMember(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maximumLength, isInitial(bytes[0]) else { return false }
        var index = 1
        while index < bytes.count {
            guard isElement(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// A bus name: at most 255 bytes. A unique name is `:` and elements of
    /// `[A-Za-z0-9_-]` joined by `.`, none empty (libdbus accepts `:` alone
    /// and one element, and so does this); a well-known name has two or more
    /// elements, each `[A-Za-z_-][A-Za-z0-9_-]*`.
    static func isBusName(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        let unique = bytes[0] == UInt8(ascii: ":")
        guard unique || isBusInitial(bytes[0]) else { return false }
        var dotted = false
        var index = 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                guard index + 1 < bytes.count else { return false }
                let next = bytes[index + 1]
                guard unique ? isBusElement(next) : isBusInitial(next) else { return false }
                dotted = true
                index += 2
            } else {
                guard isBusElement(byte) else { return false }
                index += 1
            }
        }
        return unique || dotted
    }
}

/// A bus name: unique (`:1.42`, assigned by the bus) or well-known
/// (`org.example.Forms1`). Checked as `dbus_validate_bus_name` checks it.
/// D-Bus server addresses (`unix:path=/run/flowd/bus`, `tcp:host=…,port=…`).
package enum BusAddress {
    /// Checks the syntax of `address` as libdbus parses it, so a typo is
    /// told as a bad option rather than as an unreachable bus.
    ///
    /// - Throws: `InvalidArgs` with libdbus' reason.
    package static func check(_ address: String) throws(DBusError) {
        guard !address.isEmpty else { throw .invalidArgs("an empty D-Bus address") }
        if let error = LibDBus.validateAddress(address) {
            throw .invalidArgs("\"\(address)\" is not a D-Bus address: \(error.message)")
        }
    }
}

package struct BusName: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, checked in Swift (``NameRules``); libdbus says why a name is refused.
    package static func validate(_ string: String) -> DBusError? {
        invalid(string, refusal(Self.self, "bus name", string, LibDBus.validateBusName))
    }
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool { NameRules.isBusName(bytes) }

    /// True for a unique connection name (`:1.42`).
    package var isUnique: Bool { rawValue.utf8.first == UInt8(ascii: ":") }

    /// The bus driver itself, `org.freedesktop.DBus`.
    package static let bus: BusName = "org.freedesktop.DBus"
}

/// An object path (`/org/example/Forms1`). Checked as `dbus_validate_path` checks it.
package struct ObjectPath: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, checked in Swift (``NameRules``); libdbus says why a name is refused.
    package static func validate(_ string: String) -> DBusError? {
        invalid(string, refusal(Self.self, "object path", string, LibDBus.validatePath))
    }
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool { NameRules.isPath(bytes) }

    /// The root path `/`.
    package static let root: ObjectPath = "/"

    /// The path elements, empty for `/`.
    ///
    /// Split on the byte `/`, not on `Character`s: a valid path is ASCII, and
    /// this runs for every call to a tree object and every signal it emits
    /// (grapheme breaking cost more than the rest of the lookup).
    package var components: [Substring] {
        rawValue.utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
    }

    /// The last element (`"abc"` for `/x/abc`), nil for `/`.
    ///
    /// Found by scanning the bytes: a tree's resolver asks for it at every
    /// call and every signal.
    package var lastComponent: Substring? {
        var text = rawValue
        let range: (start: Int, end: Int)? = text.withUTF8 { bytes in
            var end = bytes.count
            while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
            guard end > 0 else { return nil }
            var start = end
            while start > 0, bytes[start - 1] != UInt8(ascii: "/") { start -= 1 }
            return (start, end)
        }
        guard let range else { return nil }
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: range.start)
        let end = utf8.index(start, offsetBy: range.end - range.start)
        return text[start..<end]
    }

    /// The enclosing path; nil for `/`.
    package var parent: ObjectPath? {
        guard rawValue != "/" else { return nil }
        guard let slash = rawValue.utf8.lastIndex(of: UInt8(ascii: "/")), slash != rawValue.startIndex else { return .root }
        return ObjectPath(trusted: String(rawValue[..<slash]))
    }

    /// This path with one more element; throws when `component` is not made of
    /// `[A-Za-z0-9_]` only.
    package func appending(_ component: String) throws(DBusError) -> ObjectPath {
        try ObjectPath(rawValue == "/" ? "/" + component : rawValue + "/" + component)
    }

    /// True when `other` lies strictly below this path.
    package func isAncestor(of other: ObjectPath) -> Bool {
        if rawValue == "/" { return other.rawValue != "/" }
        // Paths are ASCII: compare bytes, then require a "/" right after.
        var mine = rawValue
        var theirs = other.rawValue
        return mine.withUTF8 { m in
            theirs.withUTF8 { t in
                guard t.count > m.count, t[m.count] == UInt8(ascii: "/"), let mine = m.baseAddress, let theirs = t.baseAddress
                else { return false }
                return NameRules.bytesEqual(UnsafeRawPointer(mine), UnsafeRawPointer(theirs), count: m.count)
            }
        }
    }

    /// The element right below this path on the way to `descendant`
    /// (`"b"` for `/a` and `/a/b/c`), nil when it is not a descendant.
    package func childComponent(toward descendant: ObjectPath) -> Substring? {
        guard isAncestor(of: descendant) else { return nil }
        let rest = descendant.rawValue.dropFirst(rawValue == "/" ? 1 : rawValue.count + 1)
        return rest.split(separator: "/", maxSplits: 1).first
    }
}

/// An interface name (`org.example.Forms1.Session`). Checked as `dbus_validate_interface` checks it.
package struct InterfaceName: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, checked in Swift (``NameRules``); libdbus says why a name is refused.
    package static func validate(_ string: String) -> DBusError? {
        invalid(string, refusal(Self.self, "interface name", string, LibDBus.validateInterface))
    }
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool { NameRules.isDotted(bytes) }

    /// `org.freedesktop.DBus.Introspectable`.
    package static let introspectable: InterfaceName = "org.freedesktop.DBus.Introspectable"
    /// `org.freedesktop.DBus.Properties`.
    package static let properties: InterfaceName = "org.freedesktop.DBus.Properties"
    /// `org.freedesktop.DBus.Peer`.
    package static let peer: InterfaceName = "org.freedesktop.DBus.Peer"
    /// `org.freedesktop.DBus.ObjectManager`: the objects below a path, with
    /// their interfaces and properties, and signals when they come and go.
    package static let objectManager: InterfaceName = "org.freedesktop.DBus.ObjectManager"
    /// `org.freedesktop.DBus`, the bus driver's interface.
    package static let bus: InterfaceName = "org.freedesktop.DBus"
    /// `org.freedesktop.DBus.Local`, signals libdbus makes up itself (Disconnected).
    package static let local: InterfaceName = "org.freedesktop.DBus.Local"
}

/// A method, signal or property name (`SetAnswers`). Checked as `dbus_validate_member` checks it.
package struct MemberName: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, checked in Swift (``NameRules``); libdbus says why a name is refused.
    package static func validate(_ string: String) -> DBusError? {
        invalid(string, refusal(Self.self, "member name", string, LibDBus.validateMember))
    }
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool { NameRules.isMember(bytes) }
}

/// An error name (`org.example.Forms1.Error.NotFound`). Checked as `dbus_validate_error_name` checks it.
package struct ErrorName: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, checked in Swift (``NameRules``); libdbus says why a name is refused.
    package static func validate(_ string: String) -> DBusError? {
        guard let refusal = refusal(Self.self, "error name", string, LibDBus.validateErrorName) else { return nil }
        // Not through `invalidArgs`: that would build an ErrorName while validating one.
        return DBusError(name: .invalidArgs, message: "invalid error name \"\(string)\": \(refusal.reason)")
    }
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool { NameRules.isDotted(bytes) }
}
