// fuzz-dbus-args: the daemon's parsing of inbound D-Bus arguments. Two ways
// in, chosen by the first byte:
//
// - raw: a method call whose signature and body are the fuzzer's bytes
//   (behind a valid header), checked by libdbus as a message from the bus
//   is, then read by the DBus module into values;
// - built: a SetAnswers call whose `a{sv}` is generated from the bytes
//   (hostile strings, every integer type, non-finite doubles, nested
//   variants, lists, structures), written, marshaled, read back.
//
// A raw message libdbus loads is read the same by flowd's own receive path
// (`MessageFramer`, `Message(received:)`), as values and typed as SetAnswers
// reads it. Either way the `a{sv}` goes through what SetAnswers and StartSession do
// with it (ValueMapping.answers, ManagerInterface.startOptions) under small
// limits: it is refused with a FlowdError or accepted within every limit; and
// what was written reads back the same.
import DBus
import FuzzSupport

@testable import FlowDaemon

let limits: SessionLimits = {
    var limits = SessionLimits()
    limits.maxStringLength = 64
    limits.maxAnswersPerCall = 8
    limits.maxListLength = 4
    return limits
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusArguments(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    if input.byte() & 1 == 0 {
        raw(&input)
    } else {
        built(&input)
    }
    return 0
}

/// A method call around the fuzzer's signature and body.
func raw(_ input: inout FuzzInput) {
    let signature = Array(input.string(limit: 40).utf8)
    let body = input.rest()
    let bytes = WireMessage.methodCall(signature: signature, body: body)
    let own = ownMessage(bytes)
    guard let message = try? Message.demarshaling(bytes) else { return }
    // What libdbus loads and reads, flowd's own reader reads the same (its
    // text: a NaN is not equal to itself), typed as SetAnswers reads it or
    // as values. Not for `h`: this message carries no descriptors, which the
    // own reader refuses at once.
    if !signature.contains(UInt8(ascii: "h")), let values = try? message.readArguments() {
        guard let own else { return require(false, "flowd's own reader refused a message libdbus reads: \(values)") }
        let ours = (try? own.readArguments()).map { "\($0)" } ?? "nothing"
        require(ours == "\(values)", "flowd's own reader read \(ours), libdbus \(values)")
        require(typedRead(own) == typedRead(message), "typed: flowd read \(typedRead(own)), libdbus \(typedRead(message))")
    }
    var reader = message.arguments()
    if let dictionary = try? reader.next([String: DBusValue].self) { parse(dictionary) }
}

/// `bytes` as flowd's own receive path reads them (`MessageFramer`,
/// `Message(received:)`); nil when it refuses them.
func ownMessage(_ bytes: [UInt8]) -> Message? {
    var framer = MessageFramer()
    framer.append(bytes)
    guard let message = try? framer.next() else { return nil }
    return try? Message(received: message)
}

/// The first argument read as SetAnswers reads it (`a{sv}`), as text: the
/// entries in key order, or the error.
func typedRead(_ message: Message) -> String {
    var reader = message.arguments()
    do {
        let dictionary = try reader.next([String: DBusValue].self)
        return dictionary.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    } catch {
        return "\(error)"
    }
}

/// A SetAnswers call with a generated `a{sv}`.
func built(_ input: inout FuzzInput) {
    var generator = ValueGenerator(input: input)
    var entries: [DBusDictEntry] = []
    for _ in 0..<generator.input.below(12) {
        entries.append(DBusDictEntry(key: .string(generator.input.string(limit: 80)), value: .variant(generator.value(depth: 0))))
    }
    let written = DBusValue.dictionary(keyType: Signature(trusted: "s"), valueType: Signature(trusted: "v"), entries)
    let call = Message.methodCall(
        destination: nil, path: "/org/flowd/Flow1/session/0123456789abcdef0123456789abcdef",
        interface: "org.flowd.Flow1.Session", member: "SetAnswers")
    guard (try? call.append(written)) != nil else { return }
    guard let received = try? Message.demarshaling(call.marshaled()) else {
        require(false, "libdbus refused a message it marshaled")
        return
    }
    guard let values = try? received.readArguments() else {
        require(false, "a well-formed a{sv} could not be read")
        return
    }
    require(values == [written] || generator.madeNaN, "read back, the arguments changed")
    var reader = received.arguments()
    // A key named twice is refused (docs/dbus-api.md): flowd does not pick
    // one of the values for the caller.
    let keys = entries.compactMap { $0.key.string }
    let repeated = Set(keys).count != keys.count
    guard let dictionary = try? reader.next([String: DBusValue].self) else {
        require(repeated, "a well-formed a{sv} without a repeated key is not a [String: DBusValue]")
        return
    }
    require(!repeated, "an a{sv} that names a key twice was read as a dictionary")
    parse(dictionary)
}

/// What SetAnswers and StartSession do with an `a{sv}`.
func parse(_ dictionary: [String: DBusValue]) {
    do {
        let answers = try ValueMapping.answers(dictionary, limits: limits)
        require(answers.count <= limits.maxAnswersPerCall, "\(answers.count) answers accepted")
        for (key, answer) in answers {
            require(key.utf8.count <= limits.maxStringLength, "a field id of \(key.utf8.count) bytes accepted")
            switch answer {
            case .text(let s): require(s.utf8.count <= limits.maxStringLength, "an answer of \(s.utf8.count) bytes")
            case .list(let items):
                require(items.count <= limits.maxListLength, "a list of \(items.count) items")
                require(items.allSatisfy { $0.utf8.count <= limits.maxStringLength }, "a list item over the limit")
            case .number(let d): require(d.isFinite, "a number that is not finite")
            case .bool, .integer: break
            }
        }
    } catch {
        require(!error.message.isEmpty, "a refusal without a message")
    }
    _ = try? ManagerInterface.startOptions(dictionary, limits: limits)
}

/// D-Bus values of every type the daemon might be sent, from the fuzzer's bytes.
struct ValueGenerator {
    var input: FuzzInput
    /// Set when a NaN was generated (it is not equal to itself).
    var madeNaN = false

    mutating func value(depth: Int) -> DBusValue {
        let kinds = depth < 6 ? 17 : 12
        switch input.below(kinds) {
        case 0: return .string(input.string(limit: 100))
        case 1: return .bool(input.byte() & 1 == 1)
        case 2: return .byte(input.byte())
        case 3: return .int16(Int16(truncatingIfNeeded: input.int64()))
        case 4: return .uint16(UInt16(truncatingIfNeeded: input.int64()))
        case 5: return .int32(Int32(truncatingIfNeeded: input.int64()))
        case 6: return .uint32(UInt32(truncatingIfNeeded: input.int64()))
        case 7: return .int64(input.int64())
        case 8: return .uint64(UInt64(bitPattern: input.int64()))
        case 9:
            let d = [Double.nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, Double(input.int64()) / 7][input.below(6)]
            if d.isNaN { madeNaN = true }
            return .double(d)
        case 10: return .objectPath("/org/flowd/x")
        case 11: return .signature(Signature(trusted: ["s", "a{sv}", "v", "(ii)"][input.below(4)]))
        case 12: return .array(elementType: Signature(trusted: "s"), (0..<input.below(8)).map { _ in .string(input.string(limit: 80)) })
        case 13: return .array(elementType: Signature(trusted: "i"), (0..<input.below(8)).map { _ in .int32(Int32(truncatingIfNeeded: input.int64())) })
        case 14:
            let entries = (0..<input.below(4)).map { _ in
                DBusDictEntry(key: .string(input.string(limit: 20)), value: .variant(value(depth: depth + 1)))
            }
            return .dictionary(keyType: Signature(trusted: "s"), valueType: Signature(trusted: "v"), entries)
        case 15: return .variant(value(depth: depth + 1))
        default: return .structure([value(depth: depth + 1), value(depth: depth + 1)])
        }
    }
}

/// A D-Bus method call in wire format (little-endian), built by hand so that
/// the signature and body can be anything.
enum WireMessage {
    static func methodCall(signature: [UInt8], body: [UInt8]) -> [UInt8] {
        var fields: [UInt8] = []
        func align(_ n: Int) { while (16 + fields.count) % n != 0 { fields.append(0) } }
        func stringField(_ code: UInt8, _ type: UInt8, _ value: String) {
            align(8)
            fields += [code, 1, type, 0]
            fields += le32(UInt32(value.utf8.count)) + Array(value.utf8) + [0]
        }
        stringField(1, UInt8(ascii: "o"), "/org/flowd/Flow1")
        stringField(3, UInt8(ascii: "s"), "SetAnswers")
        if !signature.isEmpty {
            align(8)
            fields += [8, 1, UInt8(ascii: "g"), 0, UInt8(truncatingIfNeeded: signature.count)] + signature + [0]
        }
        var message: [UInt8] = [UInt8(ascii: "l"), 1, 0, 1] + le32(UInt32(body.count)) + le32(1) + le32(UInt32(fields.count))
        message += fields
        while message.count % 8 != 0 { message.append(0) }
        return message + body
    }

    static func le32(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xff), UInt8(value >> 8 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 24)]
    }
}

#if !FUZZING
@main enum Replay {
    static func main() { FuzzReplay.main(fuzzDBusArguments) }
}
#endif
