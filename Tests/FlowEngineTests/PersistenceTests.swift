import FlowKit
import Foundation
import Testing

@testable import FlowEngine

@Suite struct PersistenceTests {
    let secret = "correct horse battery staple ✓"

    /// Registration, filled up to Review, with a secret password.
    func registrationAtReview() throws -> FlowSession {
        var s = try Fixture.session(Fixture.example("registration"))
        _ = try s.setAnswers(["username": .text("ada"), "email": .text("ada@example.org")], now: 1)
        // The username validator is a plugin: accept it by hand.
        if case .checking(let checks) = try s.continueStep(now: 1) {
            _ = s.applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: .accepted) })
        }
        try s.next()
        try s.set(["password": .text(secret), "confirmPassword": .text(secret)])
        try s.next()
        try s.set(["acceptTerms": .bool(true)])
        try s.next()
        #expect(s.currentStepID == "review")
        return s
    }

    @Test func recordRoundTripsWithItsFormatVersion() throws {
        var s = try branchyAtReview()
        try s.goTo("contact", now: 5)
        try s.set(["phone": .text("+49 30 1234567"), "newsletter": .bool(true)])
        let data = try JSONEncoder().encode(s.record)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"formatVersion\":1"))
        let decoded = try JSONDecoder().decode(SessionRecord.self, from: data)
        #expect(decoded == s.record)
        let restored = try FlowSession(restoring: decoded, flow: Fixture.flow(branchyJSON), clock: TestClock())
        #expect(restored.record == s.record)
        #expect(!restored.flowChangedSinceRecord)
        #expect(restored.currentStepID == "contact")
        #expect(restored.returningToReview)
        #expect(restored.currentStep() == s.currentStep())
        #expect(restored.review() == s.review())
    }

    @Test func secureValuesNeverReachTheRecord() throws {
        let s = try registrationAtReview()
        let json = try jsonText(s.record)
        #expect(!json.contains(secret))
        #expect(!json.contains("correct horse"))
        let bytes = Array(try JSONEncoder().encode(s.record))
        let needle = Array(secret.utf8)
        #expect(!bytes.indices.contains { bytes[$0...].starts(with: needle) })
        #expect(json.contains("\"secureFieldsSet\":[\"confirmPassword\",\"password\"]"))
        // Nor the session's printed or dumped forms.
        var dumped = ""
        dump(s, to: &dumped)
        #expect(!dumped.contains("correct horse"))
        #expect(!String(describing: s).contains("correct horse"))
        #expect(!String(reflecting: s).contains("correct horse"))
        // The submission does carry it, apart.
        let submission = s.submission(now: 1)
        #expect(submission.secureAnswers["password"] == secret)
        #expect(submission.answers["password"] == nil)
        #expect(s.answersOnPath(includeSecure: false)["password"] == nil)
        #expect(s.answersOnPath(includeSecure: true)["password"] == .text(secret))
        #expect(s.review().groups[1].answers.map(\.display) == ["••••••••", "••••••••"])
    }

    @Test func afterARestoreSecureStepsMustBeFilledInAgain() throws {
        let s = try registrationAtReview()
        let record = try JSONDecoder().decode(SessionRecord.self, from: JSONEncoder().encode(s.record))
        var restored = try FlowSession(restoring: record, flow: Fixture.example("registration"), clock: TestClock())
        #expect(restored.currentStepID == "review")
        let review = restored.review()
        #expect(review.groups.map(\.finished) == [true, false, true])
        #expect(review.groups[1].status == "Not finished")
        #expect(review.groups[1].answers.map(\.display) == ["Not given", "Not given"])
        guard case .redirected(let step) = try restored.beginSubmit(now: 1) else {
            Issue.record("submitted without the password")
            return
        }
        #expect(step == "password")
        let fields = restored.currentStep().fields
        #expect(fields.map(\.isSet) == [false, false])
        #expect(fields.allSatisfy { $0.value == nil })
        #expect(fields[0].error == "This field is required.")
        try restored.set(["password": .text("another secret"), "confirmPassword": .text("another secret")])
        #expect(restored.continueLabel == "Back to review")
        try restored.next()
        #expect(restored.currentStepID == "review")
        guard case .run(let request) = try restored.beginSubmit(now: 2) else {
            Issue.record("did not submit")
            return
        }
        #expect(request.submission.secureAnswers["password"] == "another secret")
    }

    @Test func aReloadedFlowKeepsTheSecureAnswersHeldInMemory() throws {
        let s = try registrationAtReview()
        // The same flow with another title: a reload of an edited file.
        let edited = String(decoding: try Fixture.exampleBytes("registration"), as: UTF8.self)
            .replacingOccurrences(of: "\"Create an account\"", with: "\"Open an account\"")
        let newFlow = try Fixture.flow(edited, file: "registration.json")
        #expect(newFlow.fingerprint != s.flow.fingerprint)
        var moved = try s.rebased(onto: newFlow)
        #expect(moved.flowChangedSinceRecord)
        #expect(moved.currentStepID == "review")
        #expect(moved.review().groups.map(\.finished) == [true, true, true])
        guard case .run(let request) = try moved.beginSubmit(now: 3) else {
            Issue.record("the reload lost the password")
            return
        }
        #expect(request.submission.secureAnswers["password"] == secret)

        // A field that is no longer secure does not get the secret as an answer.
        let retyped = edited.replacingOccurrences(
            of: "\"id\": \"confirmPassword\",\n          \"type\": \"secure\"",
            with: "\"id\": \"confirmPassword\",\n          \"type\": \"text\"")
        #expect(retyped != edited)
        let plain = try s.rebased(onto: Fixture.flow(retyped, file: "registration.json"))
        #expect(plain.review().groups.map(\.finished) == [true, false, true])
        #expect(plain.answersOnPath(includeSecure: true)["confirmPassword"] == nil)
        #expect(plain.answersOnPath(includeSecure: true)["password"] == .text(secret))
    }

    @Test func aRestoredSubmittingSessionIsMarkedInterrupted() throws {
        var s = try branchyAtReview()
        _ = try s.beginSubmit(now: 1)
        var restored = try FlowSession(restoring: s.record, flow: Fixture.flow(branchyJSON), clock: TestClock())
        #expect(restored.state == .submitting)
        restored.markInterrupted(now: 2)
        #expect(restored.state == .failed)
        #expect(restored.lastError == "Sending was interrupted. Try again.")
        guard case .run = try restored.beginSubmit(now: 3) else {
            Issue.record("could not retry")
            return
        }
    }

    @Test func restoringAgainstAChangedFlowDropsWhatNoLongerFits() throws {
        var s = try branchy()
        try s.set(["kind": .text("company")])
        try s.next()
        try s.set(["companyName": .text("ACME")])
        try s.next()
        try s.set(["email": .text("a@acme.example"), "phone": .text("123")])
        // The new version has no company step, and "phone" became a number.
        let changed = branchyJSON
            .replacingOccurrences(of: #"{"id": "phone", "type": "text", "label": "Phone"}"#, with: #"{"id": "phone", "type": "number", "label": "Phone"}"#)
            .replacingOccurrences(of: #"{"if": {"field": "kind", "equals": "company"}, "goto": "company"}, "#, with: "")
            .replacingOccurrences(of: #"{"id": "company", "title": "Company", "fields": [{"id": "companyName", "type": "text", "label": "Company name", "required": true}],"#, with: "")
            .replacingOccurrences(of: #""next": "contact"},"#, with: "")
        let newFlow = try Fixture.flow(changed)
        #expect(newFlow.step("company") == nil)
        let restored = try FlowSession(restoring: s.record, flow: newFlow, clock: TestClock())
        #expect(restored.flowChangedSinceRecord)
        #expect(restored.record.answers["companyName"] == nil)
        #expect(restored.record.answers["phone"] == nil)
        #expect(restored.record.answers["email"] == .text("a@acme.example"))
        #expect(restored.record.flowFingerprint == newFlow.fingerprint)
        // The path is now kind → person → contact; the session stays on contact.
        #expect(restored.path.map(\.id) == ["kind", "person", "contact", "review"])
        #expect(restored.currentStepID == "contact")
        #expect(restored.review().groups.map(\.finished) == [true, false, false])
    }

    @Test func aStepThatLeftThePathMovesTheSessionToTheFirstUnfinishedStep() throws {
        var s = try branchy()
        try s.set(["kind": .text("company")])
        try s.next()
        #expect(s.currentStepID == "company")
        let changed = branchyJSON.replacingOccurrences(of: #""equals": "company"}, "goto": "company"}"#, with: #""equals": "person"}, "goto": "company"}"#)
        let flow = try FlowLoader.load(changed, fileName: "b.json", capabilities: .any)
        let restored = try FlowSession(restoring: s.record, flow: flow, clock: TestClock())
        #expect(restored.currentStepID == "person")
        #expect(restored.state == .editing)
    }

    @Test func incompatibleRecordsAreRefused() throws {
        let s = try branchy()
        let other = try Fixture.flow(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}"#))
        #expect(throws: SessionError.self) { try FlowSession(restoring: s.record, flow: other, clock: TestClock()) }
        let json = try jsonText(s.record).replacingOccurrences(of: "\"formatVersion\":1", with: "\"formatVersion\":2")
        let future = try JSONDecoder().decode(SessionRecord.self, from: Data(json.utf8))
        let flow = try Fixture.flow(branchyJSON)
        do {
            _ = try FlowSession(restoring: future, flow: flow, clock: TestClock())
            Issue.record("restored a record of a future format")
        } catch {
            #expect(error.kind == .incompatibleRecord)
        }
    }

    @Test func hostileRecordsAreRepairedNotTrusted() throws {
        let s = try branchy()
        var json = try jsonText(s.record)
        json = json.replacingOccurrences(of: "\"answers\":{}", with: #""answers":{"kind":["not","a","string"],"ghost":"boo","email":"x@y.example"}"#)
        json = json.replacingOccurrences(of: "\"currentStep\":\"kind\"", with: "\"currentStep\":\"nowhere\"")
        json = json.replacingOccurrences(of: "\"completed\":[]", with: "\"completed\":[\"kind\",\"contact\",\"ghost\"]")
        let record = try JSONDecoder().decode(SessionRecord.self, from: Data(json.utf8))
        let restored = try FlowSession(restoring: record, flow: Fixture.flow(branchyJSON), clock: TestClock())
        #expect(restored.record.answers == ["email": .text("x@y.example")])
        #expect(restored.currentStepID == "kind")
        #expect(!restored.record.completed.contains("ghost"))
    }
}
