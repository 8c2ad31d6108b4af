import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Whole flows driven through flowd over the bus with the project's own
/// client, while a second connection watches the signals.
@Suite("Driving flows through flowd")
struct FlowDriveTests {
    @Test("the trip flow: branching, Back, Review, Edit, Submit without an action; signals seen by a second connection")
    func tripWithReview() async throws {
        try await withDaemon { fixture in
            let watcher = try await EventWatcher(try fixture.connect())
            let client = fixture.client

            // Start: SessionNew and SessionCount reach the watcher.
            let session = try await client.startSession(flow: "trip", locale: "en", prefill: [:])
            let new = try #require(await watcher.nextManagerSignal { if case .sessionNew = $0 { true } else { false } })
            #expect(new == .sessionNew(id: session))
            #expect(await watcher.next { if case .sessionCount = $0 { true } else { false } } == .sessionCount(1))
            #expect(session.count == 32 && session.allSatisfy { $0.isHexDigit && !$0.isUppercase })

            // A content step first: no Back, Continue allowed.
            var step = try await client.step(session)
            #expect(step.id == "welcome" && step.kind == .content)
            #expect((step.index, step.count) == (1, 6))
            #expect(step.canGoBack == false)
            #expect(step.announcement == "Step 1 of 6, Welcome")
            #expect(try await client.property(.canGoBack, of: session) == false)
            #expect(try await client.property(.state, of: session) == "editing")
            #expect(try await client.property(.flowID, of: session) == "trip")
            #expect(try await client.property(.owner, of: session) == .uint32(getuid()))
            await expectDBusError(FlowdErrorName.invalidState, "Back on the first step") { try await client.back(session) }

            #expect(try await client.continueStep(session) == [:])
            // The step completed, the new step is announced, and its
            // properties changed, all seen by the other connection.
            let completed = try #require(await watcher.nextSignal(of: session) { if case .stepCompleted = $0 { true } else { false } })
            #expect(completed == .stepCompleted(step: "welcome", answers: [:]))
            let announced = try #require(await watcher.nextSignal(of: session) { if case .announcement = $0 { true } else { false } })
            #expect(announced == .announcement(text: "Step 2 of 6, Traveller"))
            #expect(await watcher.nextPropertyChange(.currentStep, of: session) == .string("traveller"))
            #expect(try await client.property(.announcement, of: session) == "Step 2 of 6, Traveller")

            // Validation: each field reports its own error as soon as it is set.
            var errors = try await client.setAnswers(session, ["name": "A", "email": "not-an-address"])
            #expect(Set(errors.keys) == ["name", "email"])
            #expect(try await client.property(.canContinue, of: session) == false)
            step = try await client.step(session)
            #expect(step.field("name")?.error.isEmpty == false)
            #expect(step.field("name")?.value == .string("A"))
            errors = try await client.continueStep(session)
            #expect(Set(errors.keys) == ["name", "email"], "Continue is refused while the step is invalid")
            #expect(try await client.property(.currentStep, of: session) == "traveller")
            #expect(try await client.setAnswers(session, ["name": "Ada Lovelace", "email": "ada@example.org"]) == [:])
            #expect(await watcher.nextPropertyChange(.canContinue, of: session) == .bool(true))
            #expect(try await client.continueStep(session) == [:])
            let travellerDone = try #require(await watcher.nextSignal(of: session) { signal in
                if case .stepCompleted("traveller", _) = signal { true } else { false }
            })
            #expect(travellerDone == .stepCompleted(step: "traveller", answers: ["name": "Ada Lovelace", "email": "ada@example.org"]))

            // A choice with Other: Other needs its text.
            #expect(try await client.step(session).field("mode")?.other == true)
            #expect(try await client.step(session).field("mode")?.options.map(\.id) == ["train", "plane"])
            errors = try await client.setAnswers(session, ["mode": "other"])
            #expect(errors["mode"]?.isEmpty == false, "Other without its text")
            #expect(try await client.setAnswers(session, ["mode": "other", "mode.other": "Bicycle"]) == [:])
            // Branching: plane adds the flight step, and the count follows.
            #expect(try await client.setAnswers(session, ["mode": "plane"]) == [:])
            #expect(try await client.property(.stepCount, of: session) == .uint32(7))
            #expect(await watcher.nextPropertyChange(.stepCount, of: session) { $0 == .uint32(7) } != nil)
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.currentStep, of: session) == "flight")
            errors = try await client.setAnswers(session, ["seat": "window", "bags": .double(1.5)])
            #expect(errors.keys.sorted() == ["bags"], "bags must be whole")
            #expect(try await client.setAnswers(session, ["bags": .int64(2)]) == [:])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.currentStep, of: session) == "extras")
            let extras = try await client.step(session)
            #expect((extras.index, extras.count) == (5, 7))

            // Back follows the path taken: extras → flight → mode.
            try await client.back(session)
            #expect(try await client.property(.currentStep, of: session) == "flight")
            try await client.back(session)
            #expect(try await client.property(.currentStep, of: session) == "mode")
            // Train leaves the flight branch; its answers are kept but leave the path.
            #expect(try await client.setAnswers(session, ["mode": "train"]) == [:])
            #expect(try await client.property(.stepCount, of: session) == .uint32(6))
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.currentStep, of: session) == "extras")
            try await client.back(session)
            #expect(try await client.property(.currentStep, of: session) == "mode", "Back skips the abandoned flight step")
            #expect(try await client.continueStep(session) == [:])
            // GoTo reaches only visited steps.
            await expectDBusError(FlowdErrorName.invalidState, "GoTo a step not visited") { try await client.goTo(session, step: "account") }
            await expectDBusError(FlowdErrorName.invalidState, "GoTo review before every step is done") {
                try await client.goTo(session, step: "review")
            }

            // A multiple choice with maxSelected, and a toggle that must be on.
            #expect(try await client.step(session).field("extras")?.hint == "Select all that apply")
            errors = try await client.setAnswers(session, ["extras": .strings(["wifi", "meal", "lounge"])])
            #expect(errors["extras"]?.isEmpty == false)
            #expect(try await client.setAnswers(session, ["extras": .strings(["wifi", "meal"])]) == [:])
            errors = try await client.continueStep(session)
            #expect(errors["terms"]?.isEmpty == false, "the terms must be accepted")
            #expect(try await client.setAnswers(session, ["terms": true]) == [:])
            #expect(try await client.continueStep(session) == [:])

            // Secure fields and a step rule.
            #expect(try await client.property(.currentStep, of: session) == "account")
            // The step rule speaks as soon as both are set, and on Continue.
            #expect(try await client.setAnswers(session, ["password": "correct horse", "confirm": "correct horsf"])
                    == ["confirm": "Passwords do not match."])
            errors = try await client.continueStep(session)
            #expect(errors["confirm"] == "Passwords do not match.")
            #expect(try await client.setAnswers(session, ["confirm": "correct horse"]) == [:])
            let passwordField = try #require(try await client.step(session).field("password"))
            #expect(passwordField.value == nil, "a secure value is never read back")
            #expect(passwordField.isSet == true)
            #expect(try await client.continueStep(session) == [:])
            let accountDone = try #require(await watcher.nextSignal(of: session) { signal in
                if case .stepCompleted("account", _) = signal { true } else { false }
            })
            #expect(accountDone == .stepCompleted(step: "account", answers: [:]), "secure answers never go out in signals")

            // Review: one group per form step on the path, the note, masked secrets.
            #expect(try await client.property(.state, of: session) == "review")
            #expect(try await client.property(.currentStep, of: session) == "review")
            #expect(try await client.property(.continueLabel, of: session) == "Book")
            var review = try await client.review(session)
            #expect(review.note == "We email you a summary.")
            #expect(review.groups.map(\.step) == ["traveller", "mode", "extras", "account"])
            #expect(review.group("traveller")?.editLabel == "Edit “Traveller”")
            #expect(review.group("mode")?.display("mode") == "Train")
            #expect(review.group("account")?.display("password")?.contains("correct") == false)
            #expect(review.group("account")?.display("password")?.isEmpty == false)
            #expect(review.groups.allSatisfy { $0.finished == true })
            // GetAnswers: the path's answers, without the abandoned branch or secrets.
            let answers = try await client.answers(session)
            #expect(Set(answers.keys) == ["name", "email", "mode", "extras", "terms"])
            #expect(answers["extras"] == .strings(["wifi", "meal"]))
            #expect(answers["terms"] == .bool(true))

            // Edit: GoTo a step from Review, Continue goes straight back.
            try await client.goTo(session, step: "traveller")
            #expect(try await client.property(.returningToReview, of: session) == true)
            #expect(try await client.property(.continueLabel, of: session) == "Back to review")
            #expect(await watcher.nextPropertyChange(.returningToReview, of: session) == .bool(true))
            errors = try await client.setAnswers(session, ["name": " "])
            #expect(errors["name"]?.isEmpty == false)
            review = try await client.review(session)
            #expect(review.group("traveller")?.finished == false)
            #expect(review.group("traveller")?.status == "Not finished")
            // Submit while a step is not finished leads there instead.
            await expectDBusError(FlowdErrorName.validationFailed) { try await client.submit(session) }
            #expect(try await client.property(.currentStep, of: session) == "traveller")
            #expect(try await client.setAnswers(session, ["name": "Ada King"]) == [:])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.currentStep, of: session) == "review")
            #expect(try await client.property(.returningToReview, of: session) == false)
            #expect(try await client.review(session).group("traveller")?.display("name") == "Ada King")

            // Submit: no action, so it settles at once.
            try await client.submit(session)
            #expect(try await client.property(.state, of: session) == "submitted")
            #expect(await watcher.nextSignal(of: session) { if case .submitted = $0 { true } else { false } } != nil)
            #expect(await watcher.nextPropertyChange(.state, of: session) { $0 == .string("submitted") } != nil)
            #expect(try await client.step(session).id == "complete")
            // The outcome is announced, and can be read back.
            let outcome = try #require(try await client.property(.announcement, of: session).string)
            #expect(!outcome.isEmpty)
            #expect(await watcher.nextSignal(of: session) { $0 == .announcement(text: outcome) } != nil,
                    "no Announcement of the submit's outcome (\(outcome))")
            // Settled: immutable, no Back, Submit and Continue do nothing.
            try await client.submit(session)
            #expect(try await client.continueStep(session) == [:])
            await expectDBusError(FlowdErrorName.invalidState) { try await client.back(session) }
            await expectDBusError(FlowdErrorName.invalidState) { try await client.goTo(session, step: "traveller") }
            #expect(try await client.property(.canGoBack, of: session) == false)
            #expect(try await client.answers(session)["name"] == .string("Ada King"))

            // Close: SessionRemoved, then NotFound.
            try await client.close(session)
            let removed = try #require(await watcher.nextManagerSignal { if case .sessionRemoved = $0 { true } else { false } })
            #expect(removed == .sessionRemoved(id: session))
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.getSession(session) }
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.step(session) }
            #expect(try await client.sessionCount() == 0)
        }
    }

    @Test("a flow without Review or submit action: the last Continue reads Finish-title and settles")
    func quickWithoutReview() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let watcher = try await EventWatcher(try fixture.connect())
            let session = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
            #expect(try await client.step(session).count == 2, "no Review step is counted")
            #expect(try await client.property(.continueLabel, of: session) == "Continue")
            let errors = try await client.setAnswers(session, ["stars": .int64(9)])
            #expect(errors["stars"]?.isEmpty == false)
            #expect(try await client.setAnswers(session, ["stars": .int32(5)]) == [:])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.continueLabel, of: session) == "Send feedback")
            #expect(try await client.setAnswers(session, ["comment": "Lovely."]) == [:])
            // Cancel with no submit running does nothing.
            try await client.cancel(session)
            #expect(try await client.property(.state, of: session) == "editing")
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.state, of: session) == "submitted")
            #expect(await watcher.nextSignal(of: session) { if case .submitted = $0 { true } else { false } } != nil)
            #expect(try await client.answers(session) == ["stars": .int64(5), "comment": "Lovely."])
            // Continue again on a settled session does nothing.
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.state, of: session) == "submitted")
            await expectDBusError(FlowdErrorName.invalidState) { try await client.setAnswers(session, ["comment": "Changed"]) }
            await expectDBusError(FlowdErrorName.invalidState, "Cancel on a submitted session") { try await client.cancel(session) }
        }
    }

    @Test("locales: StartSession's locale picks the flow's and the daemon's strings")
    func locales() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let german = try await client.startSession(flow: "trip", locale: "de_DE.UTF-8", prefill: [:])
            #expect(try await client.property(.locale, of: german) == "de-DE")
            #expect(try await client.step(german).continueLabel == "Weiter")
            let flows = try await client.listFlows()
            let trip = try #require(flows.first { $0.id == "trip" })
            #expect(trip.titles == ["en": "Plan a trip", "de": "Eine Reise planen"])
            #expect(trip.review == true)
            await expectDBusError(FlowdErrorName.invalidArgs) {
                _ = try await client.startSession(flow: "trip", locale: "no such locale!", prefill: [:])
            }
        }
    }
}

/// The order of a call's signals: what happened first is announced first.
@Suite("Signal order")
struct SignalOrderTests {
    /// `member(first string argument)` for each event of `session`, in order.
    static func names(_ events: [FlowEvent], session: String) -> [String] {
        events.filter { $0.sessionID == session }.compactMap { event in
            switch event {
            case .propertiesChanged: return "PropertiesChanged"
            case .session(_, .stepCompleted(let step, _)): return "StepCompleted(\(step))"
            case .session(_, .announcement(let text)): return "Announcement(\(text))"
            case .session(_, .submitFailed(let message)): return "SubmitFailed(\(message))"
            case .session(_, .submitted): return "Submitted"
            default: return nil
            }
        }
    }

    @Test("StepCompleted comes before the next step's Announcement, and before Submitted")
    func stepCompletedFirst() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let watcher = try await EventWatcher(try fixture.connect())
            let session = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
            _ = try await watcher.drain()
            try await client.setAnswers(session, ["stars": .int64(3)])
            _ = try await watcher.drain()
            try await client.continueStep(session)
            let moved = Self.names(try await watcher.drain { Self.names($0, session: session).count >= 3 }, session: session)
            let completed = try #require(moved.firstIndex(of: "StepCompleted(rating)"), "\(moved)")
            let announced = try #require(moved.firstIndex(of: "Announcement(Step 2 of 2, Comment)"), "\(moved)")
            #expect(completed < announced, "\(moved)")
            #expect(completed < (moved.firstIndex(of: "PropertiesChanged") ?? .max), "\(moved)")

            // The last Continue of a flow without Review settles it.
            try await client.setAnswers(session, ["comment": "ok"])
            _ = try await watcher.drain()
            try await client.continueStep(session)
            let settled = Self.names(try await watcher.drain { events in
                let names = Self.names(events, session: session)
                return names.contains("Submitted") && names.contains("StepCompleted(comment)")
            }, session: session)
            let last = try #require(settled.firstIndex(of: "StepCompleted(comment)"), "\(settled)")
            let submitted = try #require(settled.firstIndex(of: "Submitted"), "\(settled)")
            #expect(last < submitted, "\(settled)")
        }
    }
}
