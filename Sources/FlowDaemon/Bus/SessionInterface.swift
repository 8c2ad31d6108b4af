import DBus
import FlowEngine
import FlowKit
import FlowProtocol
import Reactor

/// One session object (``FlowBus/sessionPath(of:)``). Made per call by the
/// tree's resolver: thousands of sessions need no registration each.
struct SessionObject: Sendable {
    let id: String
    let bound: LoopBound<BusFrontEnd>
    var front: BusFrontEnd { bound.value }

    /// Reads the session's current value.
    func read<T: Sendable>(_ body: @escaping @Sendable (FlowSession) -> T) throws(FlowdError) -> T {
        let id = self.id
        return try front.withService { service throws(FlowdError) in try service.read(id, body) }
    }
}

/// The member table of the Session interface (docs/dbus-api.md).
enum SessionInterface {
    /// The replies' signatures, made once (a literal is validated each time it is made).
    private static let vardict: Signature = "a{sv}"
    private static let stringDictionary: Signature = "a{ss}"

    static let table = InterfaceTable<SessionObject>(
        FlowBus.sessionInterface,
        methods: [
            .init(FlowMember.Session.getStep, out: [Argument("step", "a{sv}")]) { session, call in
                // The reply written straight from the engine's view: no
                // `StepPage` made from it (the bytes are the same).
                let view = try session.read { $0.currentStep() }
                call.reply(signature: vardict) { (encoder) throws(DBusError) in try view.encode(into: &encoder) }
            },
            .init(
                FlowMember.Session.setAnswers, in: [Argument("answers", "a{sv}")], out: [Argument("errors", "a{ss}")],
                handler: answering { $0.setAnswers($1, $2, reply: $3) }),
            .init(
                FlowMember.Session.checkAnswers, in: [Argument("answers", "a{sv}")], out: [Argument("errors", "a{ss}")],
                handler: answering { $0.checkAnswers($1, $2, reply: $3) }),
            .init(FlowMember.Session.continueStep, out: [Argument("errors", "a{ss}")]) { session, call in
                let id = session.id
                let reply = session.front.reply(to: call, fieldErrors)
                session.front.act { $0.continueStep(id, reply: reply) }
            },
            .init(FlowMember.Session.back) { session, call in
                let id = session.id
                try session.front.withService { service throws(FlowdError) in try service.back(id) }
                session.front.finish(call, .success(()))
            },
            .init(FlowMember.Session.goTo, in: [Argument("step", "s")]) { session, call in
                var args = call.arguments()
                let step = try args.next(String.self)
                let front = session.front
                try ValueMapping.checkLength(step, what: "the step id", limits: front.limits)
                let id = session.id
                try front.withService { service throws(FlowdError) in try service.goTo(id, step: step) }
                front.finish(call, .success(()))
            },
            .init(FlowMember.Session.getReview, out: [Argument("groups", "aa{sv}"), Argument("note", "s")]) { session, call in
                let review = try session.read { $0.review() }
                call.reply(values: ReviewPage(review).dbusArguments)
            },
            .init(FlowMember.Session.getAnswers, out: [Argument("answers", "a{sv}")]) { session, call in
                let answers = try session.read { $0.answersOnPath(includeSecure: false) }
                call.reply(.vardict(WireValue.answers(answers)))
            },
            .init(FlowMember.Session.submit) { session, call in submit(session, call, wait: true) },
            .init(FlowMember.Session.submitWithOptions, in: [Argument("options", "a{sv}")]) { session, call in
                var args = call.arguments()
                submit(session, call, wait: try submitOptions(try args.next([String: DBusValue].self)))
            },
            .init(FlowMember.Session.cancel) { session, call in
                let id = session.id
                try session.front.withService { service throws(FlowdError) in try service.cancel(id) }
                session.front.finish(call, .success(()))
            },
            .init(FlowMember.Session.close) { session, call in
                let id = session.id
                try session.front.withService { service throws(FlowdError) in try service.close(id) }
                session.front.finish(call, .success(()))
            },
            .init(FlowMember.Session.setLocale, in: [Argument("locale", "s")]) { session, call in
                var args = call.arguments()
                let tag = try ManagerInterface.localeTag(try args.next(String.self))
                let id = session.id
                let reply = session.front.reply(to: call) { (_: Void, call) in call.reply() }
                session.front.act { $0.setLocale(id, tag, reply: reply) }
            },
        ],
        properties: SessionProperty.allCases.map(property),
        signals: [
            .init(SessionSignal.stepCompletedMember, [Argument("step", "s"), Argument("answers", "a{sv}")]),
            .init(SessionSignal.submittedMember, [Argument("receipt", "a{sv}")]),
            .init(SessionSignal.submitFailedMember, [Argument("message", "s")]),
            .init(SessionSignal.announcementMember, [Argument("text", "s")]),
        ])

    /// A property, read through ``SessionProperties`` so that its getter and
    /// its `PropertiesChanged` value can never disagree (only it is worked
    /// out: a `Get` of `State` does not walk the path).
    private static func property(_ property: SessionProperty) -> InterfaceTable<SessionObject>.Property {
        InterfaceTable<SessionObject>.Property(
            property.name, property.signature, emitsChange: property.emitsChangedSignal,
            get: { session in try session.read { SessionProperties($0, only: [property]) }.value(of: property) })
    }

    /// `Submit`, and `SubmitWithOptions`: the reply waits for the action,
    /// or (`wait` false) comes as soon as it started.
    private static func submit(_ session: SessionObject, _ call: MethodInvocation, wait: Bool) {
        let id = session.id
        let front = session.front
        let reply = wait ? front.reply(to: call) { (_: Void, call) in call.reply() } : front.replyOnceStarted(to: call)
        front.act { $0.submit(id, reply: reply) }
    }

    /// The `SubmitWithOptions` options (since 1.1): `wait` (b, default
    /// true: as `Submit`). Whether the reply waits for the action.
    static func submitOptions(_ options: [String: DBusValue]) throws(FlowdError) -> Bool {
        var wait = true
        for (key, value) in options {
            guard key == "wait" else { throw .invalidArgs("unknown option \"\(key.prefix(64))\" (expected wait)") }
            guard case .bool(let flag) = value else {
                throw .invalidArgs("option wait has D-Bus type '\(value.signature)'; expected 'b'")
            }
            wait = flag
        }
        return wait
    }

    /// The handler of `SetAnswers` and `CheckAnswers`: the answers read and
    /// bounded, then `act` on the service, which replies the field errors.
    private static func answering(
        _ act: @escaping @Sendable (isolated FlowService, String, [String: AnswerValue], Reply<FieldErrors>) -> Void
    ) -> @Sendable (SessionObject, MethodInvocation) throws -> Void {
        { session, call in
            var args = call.arguments()
            let front = session.front
            let answers = try ValueMapping.answers(reading: &args, limits: front.limits)
            let id = session.id
            let reply = front.reply(to: call, fieldErrors)
            front.act { act($0, id, answers, reply) }
        }
    }

    /// Answers `SetAnswers` and `Continue`: the field errors (`a{ss}`).
    private static func fieldErrors(_ errors: FieldErrors, _ call: MethodInvocation) {
        call.reply(signature: stringDictionary) { (encoder) throws(DBusError) in try encoder.stringDictionary(errors) }
    }
}
