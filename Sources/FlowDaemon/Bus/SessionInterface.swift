import DBus
import FlowEngine
import FlowKit
import FlowProtocol

/// One session object (``FlowBus/sessionPath(of:)``). Made per call by the
/// tree's resolver: thousands of sessions need no registration each.
struct SessionObject: Sendable {
    let id: String
    let front: BusFrontEnd

    /// Reads the session's current value.
    func read<T: Sendable>(_ body: @escaping @Sendable (FlowSession) -> T) throws(FlowdError) -> T {
        let id = self.id
        return try front.withService { service throws(FlowdError) in try service.withSession(id, body) }
    }
}

/// The member table of the Session interface (docs/dbus-api.md).
enum SessionInterface {
    static let table = InterfaceTable<SessionObject>(
        FlowBus.sessionInterface,
        methods: [
            .init(FlowMember.Session.getStep, out: [Argument("step", "a{sv}")]) { session, call in
                let view = try session.read { $0.currentStep() }
                call.reply(StepPage(view).dbusValue)
            },
            .init(FlowMember.Session.setAnswers, in: [Argument("answers", "a{sv}")], out: [Argument("errors", "a{ss}")]) { session, call in
                var args = call.arguments()
                let raw = try args.next([String: DBusValue].self)
                let front = session.front
                let limits = try front.withService { $0.configuration.limits }
                let answers = try ValueMapping.answers(raw, limits: limits)
                let id = session.id
                switch try front.withService({ service throws(FlowdError) in try service.setAnswers(id, answers) }) {
                case .done(let errors):
                    call.reply(typed: errors)
                    front.flush()
                case .check(let checks):
                    front.runChecks(checks) { front, results in
                        do throws(FlowdError) {
                            let errors = try front.withService { service throws(FlowdError) in
                                try service.setAnswersChecked(id, results)
                            }
                            call.reply(typed: errors)
                        } catch {
                            call.fail(error)
                        }
                        front.flush()
                    }
                case .submit:
                    throw FlowdError.failed("internal error: SetAnswers asked to submit")
                }
            },
            .init(FlowMember.Session.continueStep, out: [Argument("errors", "a{ss}")]) { session, call in
                let id = session.id
                let next = try session.front.withService { service throws(FlowdError) in try service.continueStep(id) }
                proceedWithContinue(next, id: id, call: call, front: session.front, round: 1)
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
                try ValueMapping.checkLength(step, what: "the step id", limits: try front.withService { $0.configuration.limits })
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
            .init(FlowMember.Session.submit) { session, call in
                let id = session.id
                let next = try session.front.withService { service throws(FlowdError) in try service.submit(id) }
                switch next {
                case .done:
                    session.front.finish(call, .success(()))
                case .submit(let request):
                    startSubmit(request, id: id, front: session.front) { result in session.front.finish(call, result) }
                case .check:
                    throw FlowdError.failed("internal error: Submit asked for checks")
                }
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
        ],
        properties: SessionProperty.allCases.map(property),
        signals: [
            .init(SessionSignal.stepCompletedMember, [Argument("step", "s"), Argument("answers", "a{sv}")]),
            .init(SessionSignal.submittedMember, [Argument("receipt", "a{sv}")]),
            .init(SessionSignal.submitFailedMember, [Argument("message", "s")]),
            .init(SessionSignal.announcementMember, [Argument("text", "s")]),
        ])

    /// A property, read through ``SessionProperties`` so that its getter and
    /// its `PropertiesChanged` value can never disagree.
    private static func property(_ property: SessionProperty) -> InterfaceTable<SessionObject>.Property {
        InterfaceTable<SessionObject>.Property(
            property.name, property.signature, emitsChange: property.isConstant ? .const : .yes,
            get: { session in try session.read { SessionProperties($0) }.value(of: property) })
    }

    /// What to do after `Continue` (or its plugin checks): reply, run more
    /// checks, or run the submit the last Continue started.
    static func proceedWithContinue(
        _ next: FlowService.Next<FieldErrors>, id: String, call: MethodInvocation, front: BusFrontEnd, round: Int
    ) {
        switch next {
        case .done(let errors):
            call.reply(typed: errors)
            front.flush()
        case .check(let checks):
            guard round <= 3 else {
                front.finish(call, .failure(FlowdError(.invalidState, "the answers kept changing while they were checked; try again")))
                return
            }
            front.flush()
            front.runChecks(checks) { front, results in
                do throws(FlowdError) {
                    let next = try front.withService { service throws(FlowdError) in try service.continueChecked(id, results) }
                    proceedWithContinue(next, id: id, call: call, front: front, round: round + 1)
                } catch {
                    front.finish(call, .failure(error))
                }
            }
        case .submit(let request):
            front.flush()
            startSubmit(request, id: id, front: front) { result in
                switch result {
                case .success:
                    call.reply(typed: FieldErrors())
                    front.flush()
                case .failure(let error):
                    front.finish(call, .failure(error))
                }
            }
        }
    }

    /// Runs a submit; `done` is called on the loop thread when it ends.
    static func startSubmit(
        _ request: SubmitRequest, id: String, front: BusFrontEnd,
        done: @escaping @Sendable (Result<Void, FlowdError>) -> Void
    ) {
        front.service.assumeIsolated { service in service.startSubmit(id, request, reply: done) }
    }
}
