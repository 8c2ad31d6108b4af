import DBus
@testable import FlowDaemon
import FlowKit
import FlowProtocol
import Testing
import TestSupport

/// `SetAnswers`' answers read straight from the message
/// (``ValueMapping/answers(reading:limits:)``) are the answers, and the
/// refusals, of the dictionary `next([String: DBusValue].self)` reads and
/// ``ValueMapping/answers(_:limits:maxCount:)`` bounds: for a message
/// libdbus loaded and for one flowd read itself.
@Suite("answers read straight from the message")
struct AnswerReadingTests {
    static var limits: SessionLimits {
        var limits = SessionLimits()
        limits.maxStringLength = 8
        limits.maxAnswersPerCall = 3
        limits.maxListLength = 2
        return limits
    }

    /// `a{sv}` arguments, each with at most one thing wrong (a dictionary
    /// with two is refused for either, in an order the old path did not fix).
    static var arguments: [(String, DBusValue)] {
        let long = String(repeating: "x", count: 9)
        return [
            ("empty", .vardict([:])),
            ("every accepted type", .vardict(["s": "Ada", "l": .strings(["a", "b"]), "b": .bool(true)])),
            ("integers", .vardict(["y": .byte(7), "n": .int16(-3), "q": .uint16(9)])),
            ("wider integers", .vardict(["i": .int32(-70), "u": .uint32(70), "x": .int64(-1 << 40)])),
            ("t and d", .vardict(["t": .uint64(1 << 40), "d": .double(-0.25)])),
            ("a variant in the variant", .vardict(["v": .variant("inner")])),
            ("two variants deep", .vardict(["v": .variant(.variant(.uint32(3)))])),
            ("empty list and text", .vardict(["l": .strings([]), "s": ""])),
            ("too many", .vardict(["a": "1", "b": "2", "c": "3", "d": "4"])),
            ("too many, one too long", .vardict(["a": .string(long), "b": "2", "c": "3", "d": "4"])),
            ("too many, one of a wrong type", .vardict(["a": .int32(1), "b": .objectPath("/x"), "c": "3", "d": "4"])),
            ("a long text", .vardict(["s": .string(long)])),
            ("a long field id", .vardict([long: "v"])),
            ("a long list item", .vardict(["l": .strings(["a", long])])),
            ("a long list", .vardict(["l": .strings(["a", "b", "c"])])),
            ("a long list of a wrong type", .vardict(["l": .array(elementType: .int32, [.int32(1), .int32(2), .int32(3)])])),
            ("a list of a wrong type", .vardict(["l": .array(elementType: .int32, [.int32(1)])])),
            ("a list of variants", .vardict(["l": .array(elementType: .variant, [.variant("a")])])),
            ("a structure", .vardict(["r": .structure(["a", .uint32(1)])])),
            ("an object path", .vardict(["o": .objectPath("/a")])),
            ("a signature", .vardict(["g": .signature("s")])),
            ("a dictionary", .vardict(["d": .vardict(["x": "y"])])),
            ("a wrong type in a variant", .vardict(["v": .variant(.objectPath("/a"))])),
            ("a long text in a variant", .vardict(["v": .variant(.string(long))])),
            ("a huge unsigned", .vardict(["t": .uint64(.max)])),
            ("not finite", .vardict(["d": .double(.infinity)])),
            ("not a number", .vardict(["d": .double(.nan)])),
            ("a key twice", .dictionary(keyType: .string, valueType: .variant, [
                DBusDictEntry(key: "name", value: .variant("Ada")), DBusDictEntry(key: "name", value: .variant("Grace")),
            ])),
            ("a key twice, one long", .dictionary(keyType: .string, valueType: .variant, [
                DBusDictEntry(key: "name", value: .variant(.string(long))), DBusDictEntry(key: "name", value: .variant("G")),
            ])),
            ("a key twice past the count", .dictionary(keyType: .string, valueType: .variant, [
                DBusDictEntry(key: "a", value: .variant("1")), DBusDictEntry(key: "b", value: .variant("2")),
                DBusDictEntry(key: "c", value: .variant("3")), DBusDictEntry(key: "d", value: .variant("4")),
                DBusDictEntry(key: "a", value: .variant("5")),
            ])),
            ("not a dictionary", .string("plan")),
            ("another dictionary", .stringDictionary(["a": "b"])),
        ]
    }

    /// What the dictionary's path makes of `message`'s first argument.
    static func throughDictionary(_ message: Message) -> Result<[String: AnswerValue], DBusError> {
        Result { () throws(DBusError) in
            var args = message.arguments()
            let dictionary = try args.next([String: DBusValue].self)
            do throws(FlowdError) {
                return try ValueMapping.answers(dictionary, limits: limits)
            } catch {
                throw error.dbusError
            }
        }
    }

    static func direct(_ message: Message) -> Result<[String: AnswerValue], DBusError> {
        Result { () throws(DBusError) in
            var args = message.arguments()
            return try ValueMapping.answers(reading: &args, limits: limits)
        }
    }

    @Test("the same answers and refusals as the dictionary's path", arguments: arguments.indices)
    func sameAsDictionary(_ index: Int) throws {
        let (what, argument) = Self.arguments[index]
        let call = Message.methodCall(
            destination: FlowBus.name, path: ReceivedArgumentsTests.sessionPath, interface: FlowBus.sessionInterface,
            member: "SetAnswers")
        try call.append(argument)
        let (libdbus, own) = try ReceivedMessages.both(call, serial: 12, sender: ":1.5")
        let expected = Self.throughDictionary(libdbus)
        #expect(Self.direct(libdbus) == expected, "\(what), libdbus")
        #expect(Self.direct(own) == expected, "\(what), own bytes")
        #expect(Self.throughDictionary(own) == expected, "\(what), the dictionary's path on own bytes")
    }

    @Test("the cases cover answers and each kind of refusal")
    func coverage() throws {
        var answered = 0
        var refusals = Set<String>()
        for (_, argument) in Self.arguments {
            let call = Message.methodCall(
                destination: FlowBus.name, path: ReceivedArgumentsTests.sessionPath, interface: FlowBus.sessionInterface,
                member: "SetAnswers")
            try call.append(argument)
            let own = try ReceivedMessages.both(call).own
            switch Self.direct(own) {
            case .success(let answers): answered += answers.isEmpty ? 0 : 1
            case .failure(let error): refusals.insert(error.name.rawValue)
            }
        }
        #expect(answered >= 7)
        #expect(refusals == [DBusError.invalidArgs(".").name.rawValue, FlowErrorName.limitExceeded.errorName.rawValue,
                             FlowErrorName.invalidArgs.errorName.rawValue])
    }
}
