
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

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Turns a libdbus validation failure into `InvalidArgs` naming the kind of name.
private func invalid(_ kind: String, _ string: String, _ error: DBusError?) -> DBusError? {
    guard let error else { return nil }
    return .invalidArgs("invalid \(kind) \"\(string)\": \(error.message)")
}

/// A bus name: unique (`:1.42`, assigned by the bus) or well-known
/// (`org.example.Forms1`). Validated with `dbus_validate_bus_name`.
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
    /// The specification's rules, through libdbus.
    package static func validate(_ string: String) -> DBusError? {
        invalid("bus name", string, LibDBus.validateBusName(string))
    }

    /// True for a unique connection name (`:1.42`).
    package var isUnique: Bool { rawValue.utf8.first == UInt8(ascii: ":") }

    /// The bus driver itself, `org.freedesktop.DBus`.
    package static let bus: BusName = "org.freedesktop.DBus"
}

/// An object path (`/org/example/Forms1`). Validated with `dbus_validate_path`.
package struct ObjectPath: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, through libdbus.
    package static func validate(_ string: String) -> DBusError? {
        invalid("object path", string, LibDBus.validatePath(string))
    }

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
                return Self.bytesEqual(UnsafeRawPointer(mine), UnsafeRawPointer(theirs), count: m.count)
            }
        }
    }

    /// True when the `count` bytes at `a` and `b` are equal: eight at a
    /// time (every call to a tree's object compares its prefix).
    private static func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
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

    /// The element right below this path on the way to `descendant`
    /// (`"b"` for `/a` and `/a/b/c`), nil when it is not a descendant.
    package func childComponent(toward descendant: ObjectPath) -> Substring? {
        guard isAncestor(of: descendant) else { return nil }
        let rest = descendant.rawValue.dropFirst(rawValue == "/" ? 1 : rawValue.count + 1)
        return rest.split(separator: "/", maxSplits: 1).first
    }
}

/// An interface name (`org.example.Forms1.Session`). Validated with `dbus_validate_interface`.
package struct InterfaceName: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, through libdbus.
    package static func validate(_ string: String) -> DBusError? {
        invalid("interface name", string, LibDBus.validateInterface(string))
    }

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

/// A method, signal or property name (`SetAnswers`). Validated with `dbus_validate_member`.
package struct MemberName: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, through libdbus.
    package static func validate(_ string: String) -> DBusError? {
        invalid("member name", string, LibDBus.validateMember(string))
    }
}

/// An error name (`org.example.Forms1.Error.NotFound`). Validated with `dbus_validate_error_name`.
package struct ErrorName: ValidatedName {
    package let rawValue: String
    /// Wraps `trusted` without checking it: only for strings known valid.
    package init(trusted: String) { rawValue = trusted }
    /// The specification's rules, through libdbus.
    package static func validate(_ string: String) -> DBusError? {
        guard let error = LibDBus.validateErrorName(string) else { return nil }
        // Not through `invalidArgs`: that would build an ErrorName while validating one.
        return DBusError(name: .invalidArgs, message: "invalid error name \"\(string)\": \(error.message)")
    }
}
