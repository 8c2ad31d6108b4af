import DBus

/// A value that does not have the shape docs/dbus-api.md gives it: a key
/// the contract always sends is missing, a value has another D-Bus type, or
/// a name is not one of the contract's. The message says which and where.
package struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, as a sentence fragment naming the place.
    package let message: String

    /// An error saying `message`.
    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}

/// Strict, typed reads from one `a{sv}` of the contract: a key the contract
/// always sends must be there with its type, an optional key may be absent
/// but not of another type, and keys the contract does not name are ignored
/// (a later flowd may add some).
struct WireDictionary {
    let entries: [String: DBusValue]
    /// Where the dictionary came from, for messages: `the GetStep reply`.
    let place: String

    init(_ value: DBusValue, _ place: String) throws(WireError) {
        guard let entries = value.vardict else {
            throw WireError("\(place) has type '\(value.signature)', expected 'a{sv}'")
        }
        self.init(entries, place)
    }

    init(_ entries: [String: DBusValue], _ place: String) {
        self.entries = entries
        self.place = place
    }

    /// The value at `key`, which must be there and have `T`'s type.
    func required<T: DBusRepresentable>(_ key: String, _ type: T.Type = T.self) throws(WireError) -> T {
        guard let value = try optional(key, type) else {
            throw WireError("\(place) has no \"\(key)\" (\(T.dbusSignature))")
        }
        return value
    }

    /// The value at `key`, nil when absent; another type is an error.
    func optional<T: DBusRepresentable>(_ key: String, _ type: T.Type = T.self) throws(WireError) -> T? {
        guard let value = entries[key] else { return nil }
        return try WireDictionary.typed(value, T.self, "\"\(key)\" of \(place)")
    }

    /// The elements of the array at `key`, which must be there and have
    /// elements of type `element` (an `aa{sv}`, say).
    func list(_ key: String, of element: Signature) throws(WireError) -> [DBusValue] {
        guard let value = entries[key] else { throw WireError("\(place) has no \"\(key)\" (a\(element))") }
        guard case .array(let type, let items) = value, type == element else {
            throw WireError("\"\(key)\" of \(place) has type '\(value.signature)', expected 'a\(element)'")
        }
        return items
    }

    /// A `u` count as an `Int`.
    func count(_ key: String) throws(WireError) -> Int { Int(try required(key, UInt32.self)) }

    /// An optional `u` as an `Int`.
    func optionalCount(_ key: String) throws(WireError) -> Int? { try optional(key, UInt32.self).map(Int.init) }

    /// A string naming a case of `E`.
    func name<E: RawRepresentable<String>>(_ key: String, _ type: E.Type) throws(WireError) -> E {
        let text = try required(key, String.self)
        guard let value = E(rawValue: text) else {
            throw WireError("\"\(key)\" of \(place) is \"\(text.prefix(64))\", which the contract does not name")
        }
        return value
    }

    /// `value` as `T`, or an error naming `place`.
    static func typed<T: DBusRepresentable>(_ value: DBusValue, _ type: T.Type, _ place: String) throws(WireError) -> T {
        guard let typed = T(dbusValue: value) else {
            throw WireError("\(place) has type '\(value.signature)', expected '\(T.dbusSignature)'")
        }
        return typed
    }
}
