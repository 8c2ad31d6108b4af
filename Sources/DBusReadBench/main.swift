// dbus-read-bench: counts what reading a received SetAnswers call costs,
// libdbus' way and flowd's own (docs/performance.md, "the eighth round", G).
// Never installed; run it under callgrind:
//   swift build -c release --product dbus-read-bench
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/read.cg .build/release/dbus-read-bench [--count 1000] [--six]
//   callgrind_annotate --inclusive=yes /tmp/read.cg | swift demangle --simplified | grep counted
// Each `counted…` function handles `count` calls: divide its inclusive figure
// by the count. "Load" is making the message from its bytes (libdbus'
// loader, or the framer and `Message(received:)`); "decode" is what routing
// and the SetAnswers handler read: path, interface, member, sender, the
// signature check and the answers' `a{sv}`.
import DBus
import FlowdSystem

/// The bench's one answer (flowd-bench's SetAnswers), or with `--six` a form's page of six.
var answers: [String: DBusValue] = ["plan": .string("standard")]
var count = 1000
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument == "--six" {
        answers = [
            "name": "Ada Lovelace", "email": "ada@example.org", "age": .uint32(36), "tags": .strings(["math", "poetry"]),
            "newsletter": .bool(true), "note": "Analytical engine, first program, 1843.",
        ]
        continue
    }
    guard argument == "--count", let value = arguments.popFirst().flatMap({ Int($0) }), value > 0 else {
        print("usage: dbus-read-bench [--count N] [--six]")
        CurrentProcess.exit(SysExits.usage.rawValue)
    }
    count = value
}

/// A SetAnswers call as the bus delivers it: serial, sender, destination.
func call(_ answers: [String: DBusValue]) throws(DBusError) -> [UInt8] {
    let message = Message.methodCall(
        destination: ":1.1", path: "/org/flowd/Flow1/session/0123456789abcdef0123456789abcdef",
        interface: "org.flowd.Flow1.Session", member: "SetAnswers")
    try message.append(.vardict(answers))
    message.sender = ":1.42"
    return message.marshaled()
}

@inline(never)
func countedLoadLibDBus(_ bytes: [UInt8], _ count: Int) throws(DBusError) -> [Message] {
    var messages: [Message] = []
    messages.reserveCapacity(count)
    for _ in 0..<count { messages.append(try Message.demarshaling(bytes)) }
    return messages
}

@inline(never)
func countedLoadOwn(_ bytes: [UInt8], _ count: Int) throws(DBusError) -> [Message] {
    var messages: [Message] = []
    messages.reserveCapacity(count)
    var framer = MessageFramer()
    for _ in 0..<count {
        framer.append(bytes)
        guard let incoming = try framer.next() else { throw .failed("not a whole message") }
        messages.append(try Message(received: incoming))
    }
    return messages
}

/// What routing and the SetAnswers handler read of each message.
@inline(never)
func decode(_ messages: [Message]) throws(DBusError) -> Int {
    var total = 0
    for message in messages {
        guard let path = message.path, let member = message.member, let interface = message.interface,
            let sender = message.sender, message.hasSignature("a{sv}")
        else { throw .failed("not a SetAnswers call") }
        var arguments = message.arguments()
        let answers = try arguments.next([String: DBusValue].self)
        total &+= answers.count + path.rawValue.utf8.count + member.rawValue.utf8.count + interface.rawValue.utf8.count
            + sender.rawValue.utf8.count
    }
    return total
}

// Two names for one measurement: each returns its own sum so that the
// optimizer keeps them apart.
@inline(never)
func countedDecodeLibDBus(_ messages: [Message]) throws(DBusError) -> Int { try decode(messages) &+ 1 }

@inline(never)
func countedDecodeOwn(_ messages: [Message]) throws(DBusError) -> Int { try decode(messages) &+ 2 }

do throws(DBusError) {
    let bytes = try call(answers)
    let theirs = try countedLoadLibDBus(bytes, count)
    let ours = try countedLoadOwn(bytes, count)
    let a = try countedDecodeLibDBus(theirs)
    let b = try countedDecodeOwn(ours)
    guard a &+ 1 == b else { throw .failed("the two readers disagree") }
    print("\(answers.count) answers: \(count) calls of \(bytes.count) bytes each way; read counted… in the callgrind profile")
} catch {
    print("dbus-read-bench: \(error.message)")
    CurrentProcess.exit(SysExits.failure.rawValue)
}
