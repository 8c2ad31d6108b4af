import DBus
import FlowEngine
import FlowKit

/// One session object, `/org/flowd/Flow1/session/<id>`. Made per call by the
/// tree's resolver: thousands of sessions need no registration each.
struct SessionObject: Sendable {
    let id: String
    let front: BusFrontEnd

    /// The object path of session `id` (an id is 32 hex characters, so the
    /// path is valid by construction).
    static func path(of id: String) -> ObjectPath {
        ObjectPath(trusted: BusFrontEnd.sessionPrefix.rawValue + "/" + id)
    }

    /// Reads the session's current value.
    func read<T: Sendable>(_ body: @escaping @Sendable (FlowSession) -> T) throws(FlowdError) -> T {
        let id = self.id
        return try front.withService { service throws(FlowdError) in try service.withSession(id, body) }
    }
}

/// The member table of `org.flowd.Flow1.Session` (docs/dbus-api.md).
enum SessionInterface {
    static let table = InterfaceTable<SessionObject>(
        BusFrontEnd.sessionInterface,
        methods: [
            .init("GetStep", out: [Argument("step", "a{sv}")]) { session, call in
                let view = try session.read { $0.currentStep() }
                call.reply(.vardict(ValueMapping.step(view)))
            },
            .init("SetAnswers", in: [Argument("answers", "a{sv}")], out: [Argument("errors", "a{ss}")]) { session, call in
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
            .init("Continue", out: [Argument("errors", "a{ss}")]) { session, call in
                let id = session.id
                let next = try session.front.withService { service throws(FlowdError) in try service.continueStep(id) }
                proceedWithContinue(next, id: id, call: call, front: session.front, round: 1)
            },
            .init("Back") { session, call in
                let id = session.id
                try session.front.withService { service throws(FlowdError) in try service.back(id) }
                session.front.finish(call, .success(()))
            },
            .init("GoTo", in: [Argument("step", "s")]) { session, call in
                var args = call.arguments()
                let step = try args.next(String.self)
                let front = session.front
                try ValueMapping.checkLength(step, what: "the step id", limits: try front.withService { $0.configuration.limits })
                let id = session.id
                try front.withService { service throws(FlowdError) in try service.goTo(id, step: step) }
                front.finish(call, .success(()))
            },
            .init("GetReview", out: [Argument("groups", "aa{sv}"), Argument("note", "s")]) { session, call in
                let review = try session.read { $0.review() }
                call.reply(ValueMapping.reviewGroups(review), .string(review.note))
            },
            .init("GetAnswers", out: [Argument("answers", "a{sv}")]) { session, call in
                let answers = try session.read { $0.answersOnPath(includeSecure: false) }
                call.reply(ValueMapping.vardict(answers))
            },
            .init("Submit") { session, call in
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
            .init("Cancel") { session, call in
                let id = session.id
                try session.front.withService { service throws(FlowdError) in try service.cancel(id) }
                session.front.finish(call, .success(()))
            },
            .init("Close") { session, call in
                let id = session.id
                try session.front.withService { service throws(FlowdError) in try service.close(id) }
                session.front.finish(call, .success(()))
            },
        ],
        properties: [
            .read("Id", String.self, emitsChange: .const) { $0.id },
            .read("FlowId", String.self, emitsChange: .const) { try $0.read { $0.flow.id } },
            .read("Owner", UInt32.self, emitsChange: .const) { try $0.read { $0.record.owner } },
            .read("Locale", String.self, emitsChange: .const) { try $0.read { $0.record.locale } },
            property("State", .string),
            property("CurrentStep", .string),
            property("StepIndex", .uint32),
            property("StepCount", .uint32),
            property("CanGoBack", .bool),
            property("CanContinue", .bool),
            property("ContinueLabel", .string),
            property("ReturningToReview", .bool),
            property("LastError", .string),
            .read("CreatedAt", UInt64.self, emitsChange: .const) { try $0.read { UInt64(clamping: $0.record.createdAt) } },
            property("UpdatedAt", .uint64),
            property("Path", "a(sss)"),
            property("Announcement", .string),
            property("Receipt", "a{sv}"),
        ],
        signals: [
            .init("StepCompleted", [Argument("step", "s"), Argument("answers", "a{sv}")]),
            .init("Submitted", [Argument("receipt", "a{sv}")]),
            .init("SubmitFailed", [Argument("message", "s")]),
            .init("Announcement", [Argument("text", "s")]),
        ])

    /// A mutable property, read through ``SessionProperties`` so that its
    /// getter and its `PropertiesChanged` value can never disagree.
    private static func property(
        _ name: MemberName, _ signature: Signature
    ) -> InterfaceTable<SessionObject>.Property {
        InterfaceTable<SessionObject>.Property(
            name, signature,
            get: { session in
                let snapshot = try session.read { SessionProperties($0) }
                guard let value = value(of: name.rawValue, in: snapshot) else {
                    throw FlowdError.failed("internal error: no value for property \(name)")
                }
                return value
            })
    }

    /// The D-Bus value of the mutable property `name` in `p`.
    static func value(of name: String, in p: SessionProperties) -> DBusValue? {
        switch name {
        case "State": return .string(p.state.rawValue)
        case "CurrentStep": return .string(p.currentStep)
        case "StepIndex": return .uint32(UInt32(clamping: p.stepIndex))
        case "StepCount": return .uint32(UInt32(clamping: p.stepCount))
        case "CanGoBack": return .bool(p.canGoBack)
        case "CanContinue": return .bool(p.canContinue)
        case "ContinueLabel": return .string(p.continueLabel)
        case "ReturningToReview": return .bool(p.returningToReview)
        case "LastError": return .string(p.lastError)
        case "UpdatedAt": return .uint64(UInt64(clamping: p.updatedAt))
        case "Path": return ValueMapping.path(p.path)
        case "Announcement": return .string(p.announcement)
        case "Receipt": return ValueMapping.vardict(p.receipt)
        default: return nil
        }
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
