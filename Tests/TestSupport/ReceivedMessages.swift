import DBus

/// Compares a message flowd read itself (`Message(received:)`) with the
/// message libdbus loads from the same bytes: the same header, and the same
/// values or errors from every typed read a handler makes.
package enum ReceivedMessages {
    /// `message` as the bus delivers it (serial `serial`, sender `sender`
    /// unless it has one), loaded by libdbus and read by flowd from the same bytes.
    package static func both(_ message: Message, serial: UInt32 = 41, sender: BusName? = ":1.7") throws
        -> (libdbus: Message, own: Message)
    {
        if let sender { message.sender = sender }
        var bytes = message.marshaled()
        // The serial, in the message's byte order (libdbus writes its own: little-endian here).
        let value = bytes[0] == UInt8(ascii: "B") ? serial.bigEndian : serial.littleEndian
        withUnsafeBytes(of: value) { bytes.replaceSubrange(8..<12, with: $0) }
        return (try Message.demarshaling(bytes), try received(bytes))
    }

    /// The message the framer cuts out of `bytes`, read by flowd.
    package static func received(_ bytes: [UInt8]) throws -> Message {
        var framer = MessageFramer()
        framer.append(bytes)
        guard let incoming = try framer.next() else { throw DBusError.failed("not a whole message") }
        return try Message(received: incoming)
    }

    /// Everything the header says, as text.
    package static func header(_ m: Message) -> String {
        "\(m.type) \(m.path as Any) \(m.interface as Any) \(m.member as Any) \(m.errorName as Any) \(m.sender as Any) "
            + "\(m.destination as Any) \(m.serial) \(m.replySerial) '\(m.signature)' \(m.noReplyExpected) "
            + "\(m.allowsInteractiveAuthorization) \(m.autoStart) \(m.error as Any) \(m.isSignal(interface: "org.a.B", member: "C"))"
    }

    /// The typed reads handlers make, each from a fresh reader: flowd's
    /// argument types, every basic type, containers, skipping.
    package static let scripts = [
        "all", "s", "s s", "a{sv}", "s a{sv}", "a{ss}", "v", "u", "b", "d", "o", "g", "y", "n q i x t", "ay", "as",
        "aa{sv}", "(ss)", "a(ss)", "a{uv}", "skip value", "value end", "skip skip end",
    ]

    /// What `script` (steps separated by spaces: a type read as the Swift
    /// type handlers read it, `value`, `skip`, `end`) reads from `message`:
    /// the values, or the error's name and message.
    package static func read(_ script: String, _ message: Message) -> String {
        var reader = message.arguments()
        do throws(DBusError) {
            var out: [String] = []
            func dictionary<V>(_ d: [String: V]) -> String {
                d.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            }
            for step in script.split(separator: " ") {
                switch step {
                case "all": out.append("\(try reader.readAll())")
                case "s": out.append(try reader.next(String.self))
                case "a{sv}": out.append(dictionary(try reader.next([String: DBusValue].self)))
                case "a{ss}": out.append(dictionary(try reader.next([String: String].self)))
                case "v": out.append("\(try reader.next(DBusValue.self))")
                case "u": out.append("\(try reader.next(UInt32.self))")
                case "b": out.append("\(try reader.next(Bool.self))")
                case "d": out.append("\(try reader.next(Double.self))")
                case "o": out.append("\(try reader.next(ObjectPath.self))")
                case "g": out.append("\(try reader.next(Signature.self))")
                case "y": out.append("\(try reader.next(UInt8.self))")
                case "n": out.append("\(try reader.next(Int16.self))")
                case "q": out.append("\(try reader.next(UInt16.self))")
                case "i": out.append("\(try reader.next(Int32.self))")
                case "x": out.append("\(try reader.next(Int64.self))")
                case "t": out.append("\(try reader.next(UInt64.self))")
                case "ay": out.append("\(try reader.next([UInt8].self))")
                case "as": out.append("\(try reader.next([String].self))")
                case "aa{sv}": out.append("\(try reader.next([[String: DBusValue]].self).map { dictionary($0) })")
                case "(ss)": out.append("\(try reader.next(DBusStruct<String, String>.self).fields)")
                case "a(ss)": out.append("\(try reader.next([DBusStruct<String, String>].self).map(\.fields))")
                case "a{uv}":
                    let d = try reader.next([UInt32: DBusValue].self)
                    out.append(d.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
                case "skip": reader.skip()
                case "value": out.append("\(try reader.nextValue())")
                case "end": out.append("end \(reader.isAtEnd)")
                default: out.append("no step \(step)")
                }
            }
            return out.joined(separator: " | ")
        } catch {
            return "\(error.name): \(error.message)"
        }
    }

    /// Calls `body` with every single-byte change of `bytes` from `start`
    /// on: five values at each byte (0, 1, 0x7F, 0xFF and the byte with
    /// bit 5 flipped), each that differs from the byte.
    package static func eachCorruption(
        of bytes: [UInt8], from start: Int = 0, _ body: (_ changed: [UInt8], _ offset: Int, _ value: UInt8) throws -> Void
    ) rethrows {
        for offset in start..<bytes.count {
            for value: UInt8 in [0, 1, 0x7F, 0xFF, bytes[offset] ^ 0x20] where value != bytes[offset] {
                var changed = bytes
                changed[offset] = value
                try body(changed, offset, value)
            }
        }
    }
}
