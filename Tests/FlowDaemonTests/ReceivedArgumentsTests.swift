import DBus
@testable import FlowDaemon
import FlowProtocol
import Testing
import TestSupport

/// Every method of flowd's interfaces, called with valid and invalid
/// arguments: a message flowd reads itself (`Message(received:)`) gives its
/// handlers the same header, signature check and typed values, and throws
/// the same errors, as libdbus' message of the same bytes.
@Suite("flowd's methods read the same from received messages as from libdbus")
struct ReceivedArgumentsTests {
    static let sessionPath = ObjectPath(trusted: FlowBus.sessionPrefix.rawValue + "/0123456789abcdef0123456789abcdef")

    /// (path, interface, member, declared input types) of every method flowd serves.
    static var methods: [(ObjectPath, InterfaceName, MemberName, [Signature])] {
        let session = sessionPath
        var all: [(ObjectPath, InterfaceName, MemberName, [Signature])] = []
        for method in SessionInterface.table.methods {
            all.append((session, SessionInterface.table.name, method.name, method.inputs.map(\.signature)))
        }
        for table in [ManagerInterface.table, ObjectManagerInterface.table] {
            for method in table.methods {
                all.append((FlowBus.managerPath, table.name, method.name, method.inputs.map(\.signature)))
            }
        }
        // What the object server answers from the same tables.
        for path in [session, FlowBus.managerPath] {
            all += [
                (path, .properties, "Get", ["s", "s"]), (path, .properties, "GetAll", ["s"]),
                (path, .properties, "Set", ["s", "s", "v"]), (path, .introspectable, "Introspect", []),
                (path, .peer, "Ping", []), (path, .peer, "GetMachineId", []),
            ]
        }
        return all
    }

    /// Valid values of `type` (several for the answers' `a{sv}`).
    static func samples(_ type: Signature) -> [DBusValue] {
        switch type.rawValue {
        case "s": return ["trip", "", "0123456789abcdef0123456789abcdef", "grüße"]
        case "a{sv}":
            return [
                .vardict([:]), .vardict(["name": "Ada", "age": .uint32(36), "tags": .strings(["x", "y"]), "ok": .bool(true)]),
                .vardict(["n": .double(-0.5), "i": .int64(-3), "locale": "de", "prefill": .vardict(["name": "Ada"])]),
                .dictionary(keyType: .string, valueType: .variant, [
                    DBusDictEntry(key: "name", value: .variant("Ada")), DBusDictEntry(key: "name", value: .variant("Grace")),
                ]),
            ]
        case "a{ss}": return [.stringDictionary(["a": "b"])]
        case "v": return [.variant("x"), .variant(.uint32(1))]
        case "u": return [.uint32(7)]
        case "b": return [.bool(true)]
        case "as": return [.strings(["a", "b"])]
        default: return []
        }
    }

    /// The typed read of a declared type, as the reading scripts say it.
    static func step(_ type: Signature) -> String {
        ReceivedMessages.scripts.contains(type.rawValue) ? type.rawValue : "value"
    }

    /// Argument lists for a method taking `types`: valid ones (each sample
    /// in each place), and invalid ones (none, one too many, each argument
    /// of another type).
    static func argumentLists(_ types: [Signature]) -> [[DBusValue]] {
        let first = types.map { samples($0).first ?? .string("?") }
        var lists = [first, [], first + [.string("extra")]]
        for (index, type) in types.enumerated() {
            for sample in samples(type).dropFirst() {
                var list = first
                list[index] = sample
                lists.append(list)
            }
            var wrong = first
            wrong[index] = type == "s" ? .uint32(1) : .string("wrong")
            lists.append(wrong)
        }
        return lists
    }

    @Test("every method, with valid and invalid arguments")
    func everyMethod() throws {
        var compared = 0
        var methodsSeen = Set<String>()
        for (path, interface, member, types) in Self.methods {
            methodsSeen.insert("\(interface).\(member)")
            let declared = Signature(trusted: types.map(\.rawValue).joined())
            let script = types.isEmpty ? "end" : types.map(Self.step).joined(separator: " ") + " end"
            for arguments in Self.argumentLists(types) {
                let call = Message.methodCall(destination: FlowBus.name, path: path, interface: interface, member: member)
                try call.append(contentsOf: arguments)
                let (libdbus, own) = try ReceivedMessages.both(call, serial: 300, sender: ":1.99")
                let what = "\(interface).\(member) with \(arguments)"
                #expect(ReceivedMessages.header(own) == ReceivedMessages.header(libdbus), "\(what)")
                #expect(own.hasSignature(declared) == libdbus.hasSignature(declared), "\(what)")
                for script in [script, "all", "skip value"] {
                    #expect(ReceivedMessages.read(script, own) == ReceivedMessages.read(script, libdbus), "\(what): \(script)")
                }
                compared += 1
            }
        }
        #expect(methodsSeen.count >= 20 && compared > 100, "\(methodsSeen.count) methods, \(compared) calls")
        #expect(methodsSeen.contains("\(FlowBus.sessionInterface).SetAnswers"))
    }

    @Test("SetAnswers and StartSession: every single-byte corruption is refused by both or read the same")
    func corruptions() throws {
        let calls: [(Message, String)] = [
            (Message.methodCall(
                destination: FlowBus.name, path: Self.sessionPath,
                interface: FlowBus.sessionInterface, member: "SetAnswers"), "a{sv}"),
            (Message.methodCall(
                destination: FlowBus.name, path: FlowBus.managerPath, interface: FlowBus.managerInterface, member: "StartSession"),
             "s a{sv}"),
        ]
        try calls[0].0.append(.vardict(["name": "Ada", "tags": .strings(["x"]), "ok": .bool(true)]))
        try calls[1].0.append(.string("trip"), .vardict(["locale": "de"]))
        var refused = 0, read = 0
        for (call, script) in calls {
            let bytes = try ReceivedMessages.both(call, serial: 9, sender: ":1.4").own.marshaled()
            ReceivedMessages.eachCorruption(of: bytes) { changed, offset, value in
                switch (Result { try ReceivedMessages.received(changed) }, Result { try Message.demarshaling(changed) }) {
                case (.success(let own), .success(let libdbus)):
                    read += 1
                    #expect(ReceivedMessages.header(own) == ReceivedMessages.header(libdbus), "byte \(offset) = \(value)")
                    #expect(ReceivedMessages.read(script, own) == ReceivedMessages.read(script, libdbus), "byte \(offset) = \(value)")
                case (.failure, .failure): refused += 1
                case (let own, let libdbus): Issue.record("byte \(offset) = \(value): ours \(own), libdbus \(libdbus)")
                }
            }
        }
        #expect(refused > 0 && read > 0)
    }
}
