import DBus
import FlowdSystem
import Reactor
import Synchronization
import TestSupport

/// A stand-in for polkitd on a test's private bus: owns
/// `org.freedesktop.PolicyKit1` and answers `CheckAuthorization` on
/// `/org/freedesktop/PolicyKit1/Authority` with what the test set for each
/// action, recording every question. The real polkitd is in the system
/// suite (e2e/system).
final class FakePolkit: @unchecked Sendable {
    /// What the fake answers for an action.
    enum Answer: Sendable {
        case authorized
        case challenge
        case notAuthorized
        /// No reply at all (a stuck polkit): flowd's time limit must refuse.
        case silent
    }

    /// One `CheckAuthorization` as received.
    struct Question: Sendable, Hashable {
        var subjectKind: String
        var subjectName: String
        var action: String
        var flags: UInt32
    }

    private struct State {
        var answers: [String: Answer] = [:]
        var questions: [Question] = []
        /// Calls left unanswered (``Answer/silent``), held so they are not answered as dropped.
        var held: [MethodInvocation] = []
    }

    private let thread: EventLoopThread
    private let connection: Connection
    private let objects: LoopBound<ObjectServer>
    private let state = LockedValue(State())
    private let stopped = Atomic<Bool>(false)

    /// Connects to the bus at `address` and owns polkit's name there.
    init(address: String, answers: [String: Answer]) throws {
        thread = try EventLoopThread(name: "fake-polkit")
        let loop = thread.loop
        (connection, objects) = try thread.sync { () throws(DBusError) -> (Connection, LoopBound<ObjectServer>) in
            let connection = try Connection(.address(address), logger: .discard)
            try connection.attach(to: loop)
            return (connection, LoopBound(ObjectServer(connection: connection), loop: loop))
        }
        state.withLock { $0.answers = answers }
        let objects = self.objects
        let connection = self.connection
        let table = authorityTable
        try thread.sync { () throws(DBusError) in
            try objects.value.export(Authority(), at: "/org/freedesktop/PolicyKit1/Authority", interfaces: [table])
            _ = try connection.requestName("org.freedesktop.PolicyKit1")
        }
    }

    deinit {
        stop()
    }

    /// Leaves the bus (polkit gone); held calls go unanswered. Once only:
    /// a test that stops polkit is followed by deinit, and a second
    /// `thread.sync` would wait forever for a loop that no longer runs.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let connection = self.connection
        thread.sync { connection.close() }
        thread.stop()
        state.withLock { $0.held.removeAll() }
    }

    func setAnswer(_ answer: Answer, for action: String) {
        state.withLock { $0.answers[action] = answer }
    }

    /// Every question asked so far.
    var questions: [Question] { state.withLock { $0.questions } }

    private struct Authority: Sendable {}

    private var authorityTable: InterfaceTable<Authority> {
        InterfaceTable<Authority>(
            "org.freedesktop.PolicyKit1.Authority",
            methods: [
                .init(
                    "CheckAuthorization",
                    in: [Argument("subject", "(sa{sv})"), Argument("action_id", "s"), Argument("details", "a{ss}"),
                         Argument("flags", "u"), Argument("cancellation_id", "s")],
                    out: [Argument("result", "(bba{ss})")]
                ) { [state] _, call in
                    var args = call.arguments()
                    let subject = try args.nextValue()
                    let action = try args.next(String.self)
                    _ = try args.nextValue()
                    let flags = try args.next(UInt32.self)
                    var kind = "", name = ""
                    if case .structure(let fields) = subject, fields.count == 2, case .string(let k) = fields[0] {
                        kind = k
                        if case .dictionary(_, _, let entries) = fields[1] {
                            for entry in entries where entry.key == .string("name") {
                                if case .variant(.string(let n)) = entry.value { name = n }
                            }
                        }
                    }
                    let answer = state.withLock { state -> Answer in
                        state.questions.append(Question(subjectKind: kind, subjectName: name, action: action, flags: flags))
                        return state.answers[action] ?? .notAuthorized
                    }
                    let result: (Bool, Bool)
                    switch answer {
                    case .authorized: result = (true, false)
                    case .challenge: result = (false, true)
                    case .notAuthorized: result = (false, false)
                    case .silent:
                        state.withLock { $0.held.append(call) }
                        return
                    }
                    call.reply(.structure([.bool(result.0), .bool(result.1), .dictionary(keyType: "s", valueType: "s", [])]))
                },
            ])
    }
}
