import DBus
@testable import FlowDaemon
import FlowEngine
import FlowKit
import FlowProtocol
import Logging
import Testing
import TestSupport

/// Flows for the in-process service tests, beside TestFlows and PluginFlows.
private enum ServiceFlows {
    /// One number checked by the field validator `test.even` (at SetAnswers)
    /// and the step validator `test.step-check` (at Continue), then a second step.
    static let checked = """
        { "format": 1, "id": "checked", "title": "Checked",
          "steps": [
            {"id": "number", "title": "Number",
             "fields": [{"id": "even", "type": "number", "label": "Even", "required": true, "integer": true,
                         "validators": [{"plugin": "test.even"}]}],
             "rules": [{"plugin": "test.step-check"}]},
            {"id": "done", "title": "Done", "fields": [{"id": "note", "type": "text", "label": "Note"}]}
          ]
        }
        """

    static let all: [String: String] = TestFlows.standard.merging(PluginFlows.submitFlows) { a, _ in a }
        .merging(["checked.json": checked]) { a, _ in a }
}

private func limits(perUser: Int = 64, total: Int = 50_000, idle: Duration = .seconds(600)) -> SessionLimits {
    var limits = SessionLimits()
    limits.maxSessionsPerUser = perUser
    limits.maxSessions = total
    limits.idleTimeout = idle
    return limits
}

/// A session of `echo` (action `test.echo-submit`) on Review, with a secure PIN.
private func echoOnReview(_ service: ServiceHarness) throws -> String {
    let id = try service.start("echo")
    try service.setAnswers(id, ["name": .text("Ada"), "pin": .text("1234")])
    try service.continueStep(id)
    #expect(try service.property(.state, of: id) == .string("review"))
    _ = service.events()
    return id
}

/// Starts a `Submit` of `id`; the action's call, to answer.
private func submit(_ id: String, _ service: ServiceHarness, answers: Answers<Void>) async throws -> FakePlugins.Call {
    service.act { $0.submit(id, reply: answers.reply) }
    #expect(answers.result == nil && answers.deferred == 1, "Submit waits for its action")
    let call = try await service.nextPluginCall()
    #expect(call.kind == .submit(action: "test.echo-submit"))
    return call
}

@Suite("FlowService in-process: quotas and expiry")
struct ServiceQuotaTests {
    @Test("MaxSessionsPerUser and MaxSessions refuse the next StartSession; a closed session frees its place")
    func limitsRefuse() throws {
        let service = try ServiceHarness(limits: limits(perUser: 2, total: 3))
        let first = try service.start("quick", uid: 1000)
        _ = try service.start("quick", uid: 1000)
        #expect(throws: FlowdError.limitExceeded("uid 1000 already has the maximum of 2 sessions")) {
            try service.start("quick", uid: 1000)
        }
        _ = try service.start("quick", uid: 1001)
        #expect(throws: FlowdError.limitExceeded("the daemon holds its maximum of 3 sessions")) {
            try service.start("trip", uid: 1002)
        }
        try service.perform { service throws(FlowdError) in try service.close(first) }
        _ = try service.start("quick", uid: 1000)
        #expect(service.act { $0.sessionCount } == 3)
        #expect(service.events().filter { $0 == "SessionNew" }.count == 4)
    }

    @Test("starts waiting for their providers hold their places, so concurrent starts cannot pass a limit together")
    func waitingStartsHoldTheirPlaces() async throws {
        let service = try ServiceHarness(flows: ["providers.json": PluginFlows.providers], limits: limits(perUser: 2))
        let starts = (0..<3).map { _ in Answers<String>() }
        for answers in starts {
            service.act { $0.startSession(flowID: "providers", locale: nil, prefill: [:], uid: 1000, reply: answers.reply) }
        }
        #expect(starts[0].deferred == 1 && starts[1].deferred == 1, "the providers run first")
        #expect(starts[2].errorName == .limitExceeded, "two starts already hold both places: \(String(describing: starts[2].result))")

        // Each start asks its prefill provider, then its options provider.
        for _ in 0..<4 {
            let call = try await service.nextPluginCall()
            switch call.kind {
            case .prefill("test.prefill"): call.prefill(.success(.text("Ada")))
            case .options("test.options"): call.options(.success([ChoiceOption(id: "red", label: "Red")]))
            default: Issue.record("unexpected plugin call \(call.kind)")
            }
        }
        let first = try await service.answer(starts[0]).get()
        let second = try await service.answer(starts[1]).get()
        #expect(first != second)
        #expect(try service.property(.currentStep, of: first) == .string("numbers"))
        #expect(service.act { $0.sessionCount } == 2)
        #expect(throws: FlowdError.self) { try service.start("providers", uid: 1000) }
    }

    @Test("a start whose options provider fails is refused with PluginFailed and gives its place back")
    func failedProviderGivesItsPlaceBack() async throws {
        let service = try ServiceHarness(flows: ["providers.json": PluginFlows.providers], limits: limits(perUser: 1))
        let refused = Answers<String>()
        service.act { $0.startSession(flowID: "providers", locale: nil, prefill: [:], uid: 1000, reply: refused.reply) }
        try await service.nextPluginCall().prefill(.failure(detail: "directory down"))
        try await service.nextPluginCall().options(.failure(detail: "catalogue down"))
        #expect(try await service.answer(refused).errorName == .pluginFailed)
        #expect(service.log.records.contains { $0.message.contains("prefill provider failed: directory down") })

        let next = Answers<String>()
        service.act { $0.startSession(flowID: "providers", locale: nil, prefill: [:], uid: 1000, reply: next.reply) }
        #expect(next.result == nil, "the place was given back, so this start waits for its providers")
        #expect(service.act { $0.sessionCount } == 0)
    }

    @Test("idle expiry on the engine's clock: an untouched session goes with SessionRemoved and SessionCount; a touched one stays")
    func expiry() throws {
        let service = try ServiceHarness(limits: limits(idle: .seconds(600)))
        let idle = try service.start("quick")
        let touched = try service.start("quick")
        _ = service.events()
        service.clock.advance(by: .seconds(400))
        try service.setAnswers(touched, ["stars": .integer(3)])
        service.clock.advance(by: .seconds(400))
        #expect(service.act { $0.expireIdleSessions() } == 1)
        #expect(service.events().filter { !$0.hasPrefix("PropertiesChanged") } == ["SessionRemoved", "SessionCount"])
        #expect(throws: FlowdError.self) { try service.property(.state, of: idle) }
        #expect(try service.property(.state, of: touched) == .string("editing"))
    }

    @Test("a submitted session does not count toward MaxSessionsPerUser, and goes after SettledRetention, not IdleTimeout")
    func settledSessions() throws {
        var settings = limits(perUser: 1, idle: .seconds(600))
        settings.settledRetention = .seconds(60)
        let service = try ServiceHarness(limits: settings)
        let done = try service.start("quick")
        try service.setAnswers(done, ["stars": .integer(5)])
        try service.continueStep(done)
        try service.continueStep(done)
        #expect(try service.property(.state, of: done) == .string("submitted"))
        let open = try service.start("quick")
        #expect(throws: FlowdError.limitExceeded("uid 1000 already has the maximum of 1 sessions")) {
            try service.start("quick")
        }
        #expect(service.log.records.contains { $0.messageID == .limitReached && $0.message.hasPrefix("uid 1000 cannot start") })
        service.clock.advance(by: .seconds(30))
        #expect(service.act { $0.expireIdleSessions() } == 0)
        service.clock.advance(by: .seconds(31))
        #expect(service.act { $0.expireIdleSessions() } == 1)
        #expect(throws: FlowdError.self) { try service.property(.state, of: done) }
        #expect(try service.property(.state, of: open) == .string("editing"))
        #expect(throws: FlowdError.limitExceeded("uid 1000 already has the maximum of 1 sessions")) {
            try service.start("quick")
        }
    }
    @Test("the per-uid count stays exact through submits and closes: a settled session stops counting once, a closed one only if it counted")
    func countStaysExact() throws {
        let service = try ServiceHarness(limits: limits(perUser: 2))
        let refused = FlowdError.limitExceeded("uid 1000 already has the maximum of 2 sessions")
        let first = try service.start("quick")
        let second = try service.start("quick")
        #expect(throws: refused) { try service.start("quick") }
        // first settles: one place frees.
        try service.setAnswers(first, ["stars": .integer(5)])
        try service.continueStep(first)
        try service.continueStep(first)
        #expect(try service.property(.state, of: first) == .string("submitted"))
        let third = try service.start("quick")
        #expect(throws: refused) { try service.start("quick") }
        // Closing the settled one frees nothing: it no longer counted.
        try service.perform { service throws(FlowdError) in try service.close(first) }
        #expect(throws: refused) { try service.start("quick") }
        // Closing one that counted frees its place, once.
        try service.perform { service throws(FlowdError) in try service.close(second) }
        _ = try service.start("quick")
        #expect(throws: refused) { try service.start("quick") }
        #expect(try service.property(.state, of: third) == .string("editing"))
    }
}

@Suite("FlowService in-process: submits and their races")
struct ServiceSubmitTests {
    @Test("Submit answers when the action ends: State submitting goes out while it runs, then submitted and Submitted")
    func submitSucceeds() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try echoOnReview(service)
        let answers = Answers<Void>()
        let call = try await submit(id, service, answers: answers)
        #expect(try service.property(.state, of: id) == .string("submitting"))
        #expect(service.events().first?.contains("State") == true, "the submitting state is announced before the action ends")

        call.submit(.success(SubmitReceipt(["ticket": .string("T-1")])))
        #expect(try await service.answer(answers).error == nil)
        #expect(try service.property(.state, of: id) == .string("submitted"))
        let events = service.events()
        #expect(events.last == "Submitted", "\(events)")
        #expect(events.contains { $0.hasPrefix("PropertiesChanged") && $0.contains("Receipt") }, "\(events)")
    }

    @Test("Cancel while the action runs: Submit is answered Cancelled at once, the session is back on Review, and the action's late success changes nothing")
    func cancelBeatsALateSuccess() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try echoOnReview(service)
        let answers = Answers<Void>()
        let call = try await submit(id, service, answers: answers)
        try service.perform { service throws(FlowdError) in try service.cancel(id) }
        #expect(answers.errorName == .cancelled)
        #expect(call.wasCancelled, "the action's task was cancelled")
        #expect(try service.property(.state, of: id) == .string("review"))
        _ = service.events()

        // The plugin ignored the cancellation and succeeded anyway.
        call.submit(.success(SubmitReceipt(["ticket": .string("late")])))
        try await service.runNextJob()
        #expect(answers.all.count == 1)
        #expect(try service.property(.state, of: id) == .string("review"))
        #expect(!service.events().contains("Submitted"))
    }

    @Test("a cancelled action that ends after a second Submit started can neither answer nor settle the second")
    func staleEndOfACancelledSubmit() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try echoOnReview(service)
        let firstAnswers = Answers<Void>()
        let first = try await submit(id, service, answers: firstAnswers)
        try service.perform { service throws(FlowdError) in try service.cancel(id) }
        let secondAnswers = Answers<Void>()
        let second = try await submit(id, service, answers: secondAnswers)

        first.submit(.success(SubmitReceipt()))
        try await service.runNextJob()
        #expect(secondAnswers.result == nil, "the first action's end answered the second Submit")
        #expect(try service.property(.state, of: id) == .string("submitting"))

        second.submit(.failure(.localized("The desk is closed."), detail: "HTTP 503"))
        let result = try await service.answer(secondAnswers)
        #expect(result.error == FlowdError(.submitFailed, "The desk is closed."))
        #expect(try service.property(.state, of: id) == .string("failed"))
        #expect(firstAnswers.all.count == 1)
    }

    @Test("a failed submit: its properties, one announcement of its message, then SubmitFailed; the journal gets the detail")
    func failedSubmitEvents() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try echoOnReview(service)
        let answers = Answers<Void>()
        try await submit(id, service, answers: answers).submit(.failure(.other, detail: "connection refused"))
        #expect(try await service.answer(answers).errorName == .submitFailed)
        let events = service.events()
        // One announcement per event: "Sending…" as it starts, the message as it fails.
        let kinds = events.map { $0.hasPrefix("PropertiesChanged(") ? "PropertiesChanged" : $0 }
        #expect(kinds == ["PropertiesChanged", "Announcement", "PropertiesChanged", "Announcement", "SubmitFailed"], "\(events)")
        #expect(events.first?.hasPrefix("PropertiesChanged(") == true, "\(events)")
        #expect(service.log.records.contains { $0.message.hasSuffix(": submit failed: connection refused") && $0.message.hasPrefix("session \(id) of ") })
    }

    @Test("Close while the action runs answers Submit Cancelled and removes the session; the action's end is ignored")
    func closeDuringSubmit() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try echoOnReview(service)
        let answers = Answers<Void>()
        let call = try await submit(id, service, answers: answers)
        try service.perform { service throws(FlowdError) in try service.close(id) }
        #expect(answers.result?.error == FlowdError(.cancelled, "the session was closed"))
        #expect(service.events().suffix(2) == ["SessionRemoved", "SessionCount"])
        call.submit(.success(SubmitReceipt()))
        try await service.runNextJob()
        #expect(answers.all.count == 1)
        #expect(service.act { $0.sessionCount } == 0)
    }

    @Test("a stop answers running submits 'flowd is stopping'; the next start marks them failed 'interrupted' and never calls the action again")
    func interruptedSubmitRecovery() async throws {
        let before = try ServiceHarness(flows: ServiceFlows.all)
        let id = try echoOnReview(before)
        let answers = Answers<Void>()
        let call = try await submit(id, before, answers: answers)
        before.service.stop()
        #expect(answers.result?.error == FlowdError(.cancelled, "flowd is stopping"))
        #expect(call.wasCancelled)

        let after = try ServiceHarness(flows: ServiceFlows.all, continuing: before)
        after.service.start()
        #expect(try after.property(.state, of: id) == .string("failed"))
        #expect(try after.property(.lastError, of: id) == .string("Sending was interrupted. Try again."))
        #expect(after.plugins.callCount == 0, "the action ran again")
        #expect(after.log.records.contains { $0.message.contains("interrupted") })
        // The secure PIN lived in the stopped process only: the person types it again.
        #expect(try after.perform { service throws(FlowdError) in try service.read(id) { $0.holdsSecureAnswers } } == false)
    }
}

@Suite("FlowService in-process: reload")
struct ServiceReloadTests {
    @Test("a reload moves cached sessions to the changed flow and announces what changed; unchanged flows stay quiet; secure answers stay")
    func rebases() throws {
        let service = try ServiceHarness()
        let quick = try service.start("quick")
        try service.setAnswers(quick, ["stars": .integer(4)])
        let durable = try service.start("durable")
        try service.setAnswers(durable, ["n": .text("1"), "pin": .text("4321")])
        _ = service.events()

        let longer = TestFlows.quick.replacingOccurrences(
            of: "\"maxLength\": 200}]}",
            with: "\"maxLength\": 200}]},\n {\"id\": \"contact\", \"title\": \"Contact\", \"fields\": [{\"id\": \"mail\", \"type\": \"email\", \"label\": \"Mail\"}]}")
        try service.reload(writing: "quick.json", longer)
        let events = service.events()
        #expect(events.count == 1 && events[0].contains("StepCount"), "\(events)")
        #expect(try service.property(.stepCount, of: quick) == .uint32(3))
        #expect(try service.perform { service throws(FlowdError) in try service.read(quick) { $0.answersOnPath(includeSecure: false) } }
            == ["stars": .integer(4)])

        try service.reload(writing: "durable.json", TestFlows.durable.replacingOccurrences(of: "\"Durable\"", with: "\"Still durable\""))
        #expect(try service.perform { service throws(FlowdError) in try service.read(durable) { $0.holdsSecureAnswers } })
    }

    @Test("a reload that changes a flow's texts shows the new texts on the next page, in every locale already shown")
    func reloadShowsNewTexts() throws {
        let service = try ServiceHarness()
        let id = try service.start("quick")
        func page() throws -> StepView {
            try service.perform { service throws(FlowdError) in try service.read(id) { $0.currentStep() } }
        }
        #expect(try page().title == "Rating")
        #expect(try page().fields.map(\.label) == ["Stars"])
        try service.reload(writing: "quick.json", TestFlows.quick
            .replacingOccurrences(of: "\"title\": \"Rating\"", with: "\"title\": \"Score\"")
            .replacingOccurrences(of: "\"label\": \"Stars\"", with: "\"label\": \"Points\""))
        let after = try page()
        #expect(after.title == "Score", "the texts kept for the old definition are not shown")
        #expect(after.fields.map(\.label) == ["Points"])
        #expect(after.announcement.hasSuffix("Score"))
    }

    @Test("a session of a removed flow answers NotFound until the flow comes back")
    func removedFlow() throws {
        let service = try ServiceHarness()
        let id = try service.start("quick")
        try service.reload(removing: "quick.json")
        #expect(throws: FlowdError(.notFound, "session \(id) runs flow \"quick\", which is no longer installed")) {
            try service.property(.state, of: id)
        }
        try service.reload(writing: "quick.json", TestFlows.quick)
        #expect(try service.property(.currentStep, of: id) == .string("rating"))
    }

    @Test("a session whose submit runs keeps the definition it started with; the submit settles on it")
    func runningSubmitIsNotRebased() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try echoOnReview(service)
        let answers = Answers<Void>()
        let call = try await submit(id, service, answers: answers)
        _ = service.events()
        try service.reload(writing: "echo.json", PluginFlows.submitting(id: "echo", action: "test.echo-submit")
            .replacingOccurrences(of: "\"Who\"", with: "\"Who are you\""))
        #expect(service.events().isEmpty, "a submitting session changed under its running action")
        call.submit(.success(SubmitReceipt()))
        _ = try await service.answer(answers).get()
        #expect(try service.property(.state, of: id) == .string("submitted"))
    }
}

@Suite("FlowService in-process: what a call emits, and when")
struct ServiceEventTests {
    @Test("calls that need no plugin are answered before the service returns: no task, no deferral")
    func fastPath() throws {
        let service = try ServiceHarness()
        let id = try service.start("quick")
        let answers = Answers<FieldErrors>()
        service.act { $0.setAnswers(id, ["stars": .integer(9)], reply: answers.reply) }
        #expect(answers.deferred == 0)
        #expect(try answers.result?.get().keys.sorted() == ["stars"], "9 stars is over the maximum")
        #expect(!service.loop.hasPendingJobs)
    }

    @Test("StartSession: SessionNew, then SessionCount")
    func start() throws {
        let service = try ServiceHarness()
        _ = try service.start("trip")
        #expect(service.events() == ["SessionNew", "SessionCount"])
    }

    @Test("Continue to the next step: StepCompleted, then the new step's properties, then its Announcement")
    func continueOrder() throws {
        let service = try ServiceHarness()
        let id = try service.start("quick")
        try service.setAnswers(id, ["stars": .integer(5)])
        _ = service.events()
        #expect(try service.continueStep(id) == [:])
        let events = service.events()
        #expect(events.count == 3, "\(events)")
        #expect(events.first == "StepCompleted(rating)")
        #expect(events.dropFirst().first?.hasPrefix("PropertiesChanged(") == true && events[1].contains("CurrentStep"))
        #expect(events.last == "Announcement")
    }

    @Test("Continue's log entry, queued for after the reply: its text, message id and fields, as written")
    func continueLogEntry() throws {
        let service = try ServiceHarness()
        let id = try service.start("quick")
        try service.setAnswers(id, ["stars": .integer(5)])
        _ = service.events()
        #expect(try service.continueStep(id) == [:])
        let entries = service.service.assumeIsolated { $0.takeEvents() }.compactMap { event -> DeferredLog? in
            if case .log(let entry) = event { entry } else { nil }
        }
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.level == .info && entry.id == .stepCompleted)
        #expect(entry.message.text == "session \(id) of quick: step rating completed")
        #expect(entry.metadata.map(\.field) == [.session, .flow, .step])
        #expect(entry.metadata.map(\.text) == [id, "quick", "rating"])
        let written = CapturingBackend()
        entry.write(to: Logger(identifier: "flowd-test", metadata: [.uid: UInt32(7)], backend: written))
        #expect(written.records.map(\.message) == [entry.message.text])
        #expect(written.records.first?.metadata.map(\.text) == ["7", id, "quick", "rating"])
        #expect(written.records.first?.messageID == .stepCompleted)
    }

    @Test("a refused change emits nothing and stores nothing")
    func refusal() throws {
        let service = try ServiceHarness()
        let id = try service.start("quick")
        _ = service.events()
        #expect(throws: FlowdError.self) { try service.perform { service throws(FlowdError) in try service.goTo(id, step: "nowhere") } }
        #expect(service.events().isEmpty)
    }

    @Test("SetAnswers that changes only the answers queues Revision with UpdatedAt; the same values again queue nothing")
    func noTimestampOnlyChange() throws {
        let service = try ServiceHarness()
        let id = try service.start("quick")
        try service.setAnswers(id, ["stars": .integer(4)])
        _ = service.events()
        service.clock.advance(by: .seconds(1))
        try service.setAnswers(id, ["stars": .integer(5)])
        #expect(service.events() == ["PropertiesChanged(UpdatedAt,Revision)"])
        service.clock.advance(by: .seconds(1))
        try service.setAnswers(id, ["stars": .integer(5)])
        #expect(service.events().isEmpty, "a timestamp alone is not signalled")
        service.clock.advance(by: .seconds(1))
        try service.continueStep(id)
        #expect(service.events().contains { $0.hasPrefix("PropertiesChanged(") && $0.contains("UpdatedAt") })
    }

    @Test("SetAnswers with a plugin validator: the answer goes out before the wait, the verdict is the reply")
    func validator() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try service.start("checked")
        _ = service.events()
        let answers = Answers<FieldErrors>()
        service.act { $0.setAnswers(id, ["even": .integer(3)], reply: answers.reply) }
        #expect(answers.deferred == 1 && answers.result == nil)
        // What the answer changed goes out before the wait (Revision among it), never a timestamp alone.
        let queued = service.events()
        #expect(queued.allSatisfy { $0.hasPrefix("PropertiesChanged(") && $0 != "PropertiesChanged(UpdatedAt)" }, "\(queued)")
        let call = try await service.nextPluginCall()
        #expect(call.kind == .field("test.even", .integer(3)))
        call.field("Must be even.")
        #expect(try await service.answer(answers).get() == ["even": "Must be even."])
    }

    @Test("StartSession with a bad answer file fails and gives its quota slot back")
    func startWithBadAnswers() throws {
        let service = try ServiceHarness(flows: ServiceFlows.all, limits: limits(perUser: 1))
        let answers = Answers<String>()
        service.act {
            $0.startSession(
                flowID: "checked", locale: nil, prefill: [:], answers: ["nope": .integer(1)], uid: 1000,
                reply: answers.reply)
        }
        #expect(answers.errorName == .invalidArgs)
        #expect(service.events().isEmpty)
        _ = try service.start("checked")
    }

    @Test("a validator that throws fails closed: the field is not accepted")
    func validatorFails() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try service.start("checked")
        let answers = Answers<FieldErrors>()
        service.act { $0.setAnswers(id, ["even": .integer(4)], reply: answers.reply) }
        try await service.nextPluginCall().fail()
        let errors = try await service.answer(answers).get()
        #expect(errors["even"]?.isEmpty == false, "\(errors)")
    }

    @Test("Continue whose answers keep changing while they are checked gives up after three rounds with InvalidState")
    func continueRounds() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try service.start("checked")
        // An accepted answer, so that Continue asks the validator again.
        let first = Answers<FieldErrors>()
        service.act { $0.setAnswers(id, ["even": .integer(2)], reply: first.reply) }
        try await service.nextPluginCall().field(nil)
        #expect(try await service.answer(first).get() == [:])

        let continued = Answers<FieldErrors>()
        service.act { $0.continueStep(id, reply: continued.reply) }
        for round in 1...3 {
            let check = try await service.nextPluginCall()
            #expect(check.kind == .step("test.step-check"))
            // The answer changes while Continue's check runs: its result is stale.
            let change = Answers<FieldErrors>()
            service.act { $0.setAnswers(id, ["even": .integer(Int64(2 * round + 2))], reply: change.reply) }
            try await service.nextPluginCall().field(nil)
            #expect(try await service.answer(change).get() == [:])
            check.step([])
        }
        let result = try await service.answer(continued)
        #expect(result.errorName == .invalidState, "\(result)")
        #expect(try service.property(.currentStep, of: id) == .string("number"))
    }

    @Test("Continue with a validator that accepts: the check runs, then the session moves on")
    func continueAfterCheck() async throws {
        let service = try ServiceHarness(flows: ServiceFlows.all)
        let id = try service.start("checked")
        let set = Answers<FieldErrors>()
        service.act { $0.setAnswers(id, ["even": .integer(8)], reply: set.reply) }
        try await service.nextPluginCall().field(nil)
        _ = try await service.answer(set)
        _ = service.events()
        let continued = Answers<FieldErrors>()
        service.act { $0.continueStep(id, reply: continued.reply) }
        let check = try await service.nextPluginCall()
        #expect(check.kind == .step("test.step-check"))
        check.step([])
        #expect(try await service.answer(continued).get() == [:])
        #expect(try service.property(.currentStep, of: id) == .string("done"))
        #expect(service.events().contains("StepCompleted(number)"))
    }
}
