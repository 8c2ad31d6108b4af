import DBus
import Foundation
import Testing
import TestSupport

/// Whole flows driven through flowd over the bus with the project's own
/// client, while a second connection watches the signals.
@Suite("Driving flows through flowd")
struct FlowDriveTests {
    @Test("the trip flow: branching, Back, Review, Edit, Submit without an action; signals seen by a second connection")
    func tripWithReview() throws {
        try withDaemon { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let client = fixture.client

            // Start: SessionNew and SessionCount reach the watcher.
            let session = try client.start("trip", options: ["locale": "en"])
            let new = try #require(try watcher.nextSignal("SessionNew", path: FlowClient.managerPath))
            var newArguments = new.arguments()
            #expect(try newArguments.next(String.self) == session.id)
            #expect(try newArguments.next(ObjectPath.self) == session.path)
            #expect(try watcher.nextPropertyChange(
                "SessionCount", path: FlowClient.managerPath, interface: FlowClient.managerInterface) == .uint32(1))
            #expect(session.id.count == 32 && session.id.allSatisfy { $0.isHexDigit && !$0.isUppercase })

            // A content step first: no Back, Continue allowed.
            var step = try session.step()
            #expect(step.id == "welcome" && step.kind == "content")
            #expect((step.index, step.count) == (1, 6))
            #expect(step.canGoBack == false)
            #expect(step.announcement == "Step 1 of 6, Welcome")
            #expect(try session.bool("CanGoBack") == false)
            #expect(try session.string("State") == "editing")
            #expect(try session.string("FlowId") == "trip")
            #expect(try session.uint32("Owner") == getuid())
            expectDBusError(FlowdErrorName.invalidState, "Back on the first step") { try session.back() }

            #expect(try session.next() == [:])
            // The step completed, the new step is announced, and its
            // properties changed, all seen by the other connection.
            let completed = try #require(try watcher.nextSignal("StepCompleted", path: session.path))
            var completedArguments = completed.arguments()
            #expect(try completedArguments.next(String.self) == "welcome")
            let announced = try #require(try watcher.nextSignal("Announcement", path: session.path))
            var announcedArguments = announced.arguments()
            #expect(try announcedArguments.next(String.self) == "Step 2 of 6, Traveller")
            #expect(try watcher.nextPropertyChange("CurrentStep", path: session.path) == .string("traveller"))
            #expect(try session.string("Announcement") == "Step 2 of 6, Traveller")

            // Validation: each field reports its own error as soon as it is set.
            var errors = try session.set(["name": "A", "email": "not-an-address"])
            #expect(Set(errors.keys) == ["name", "email"])
            #expect(try session.bool("CanContinue") == false)
            step = try session.step()
            #expect(step.field("name")?.error.isEmpty == false)
            #expect(step.field("name")?.value == .string("A"))
            errors = try session.next()
            #expect(Set(errors.keys) == ["name", "email"], "Continue is refused while the step is invalid")
            #expect(try session.string("CurrentStep") == "traveller")
            #expect(try session.set(["name": "Ada Lovelace", "email": "ada@example.org"]) == [:])
            #expect(try watcher.nextPropertyChange("CanContinue", path: session.path) == .bool(true))
            #expect(try session.next() == [:])
            let travellerDone = try #require(try watcher.nextSignal("StepCompleted", path: session.path) { message in
                var reader = message.arguments()
                return (try? reader.next(String.self)) == "traveller"
            })
            var travellerArguments = travellerDone.arguments()
            _ = try travellerArguments.next(String.self)
            let travellerAnswers = try travellerArguments.next([String: DBusValue].self)
            #expect(travellerAnswers == ["name": "Ada Lovelace", "email": "ada@example.org"])

            // A choice with Other: Other needs its text.
            #expect(try session.step().field("mode")?.other == true)
            #expect(try session.step().field("mode")?.optionIDs == ["train", "plane"])
            errors = try session.set(["mode": "other"])
            #expect(errors["mode"]?.isEmpty == false, "Other without its text")
            #expect(try session.set(["mode": "other", "mode.other": "Bicycle"]) == [:])
            // Branching: plane adds the flight step, and the count follows.
            #expect(try session.set(["mode": "plane"]) == [:])
            #expect(try session.uint32("StepCount") == 7)
            #expect(try watcher.nextPropertyChange("StepCount", path: session.path) { $0 == .uint32(7) } != nil)
            #expect(try session.next() == [:])
            #expect(try session.string("CurrentStep") == "flight")
            errors = try session.set(["seat": "window", "bags": .double(1.5)])
            #expect(errors.keys.sorted() == ["bags"], "bags must be whole")
            #expect(try session.set(["bags": .int64(2)]) == [:])
            #expect(try session.next() == [:])
            #expect(try session.string("CurrentStep") == "extras")
            #expect((try session.step().index, try session.step().count) == (5, 7))

            // Back follows the path taken: extras → flight → mode.
            try session.back()
            #expect(try session.string("CurrentStep") == "flight")
            try session.back()
            #expect(try session.string("CurrentStep") == "mode")
            // Train leaves the flight branch; its answers are kept but leave the path.
            #expect(try session.set(["mode": "train"]) == [:])
            #expect(try session.uint32("StepCount") == 6)
            #expect(try session.next() == [:])
            #expect(try session.string("CurrentStep") == "extras")
            try session.back()
            #expect(try session.string("CurrentStep") == "mode", "Back skips the abandoned flight step")
            #expect(try session.next() == [:])
            // GoTo reaches only visited steps.
            expectDBusError(FlowdErrorName.invalidState, "GoTo a step not visited") { try session.goTo("account") }
            expectDBusError(FlowdErrorName.invalidState, "GoTo review before every step is done") {
                try session.goTo("review")
            }

            // A multiple choice with maxSelected, and a toggle that must be on.
            #expect(try session.step().field("extras")?.raw["hint"]?.string == "Select all that apply")
            errors = try session.set(["extras": .strings(["wifi", "meal", "lounge"])])
            #expect(errors["extras"]?.isEmpty == false)
            #expect(try session.set(["extras": .strings(["wifi", "meal"])]) == [:])
            errors = try session.next()
            #expect(errors["terms"]?.isEmpty == false, "the terms must be accepted")
            #expect(try session.set(["terms": true]) == [:])
            #expect(try session.next() == [:])

            // Secure fields and a step rule.
            #expect(try session.string("CurrentStep") == "account")
            // The step rule speaks as soon as both are set, and on Continue.
            #expect(try session.set(["password": "correct horse", "confirm": "correct horsf"])
                    == ["confirm": "Passwords do not match."])
            errors = try session.next()
            #expect(errors["confirm"] == "Passwords do not match.")
            #expect(try session.set(["confirm": "correct horse"]) == [:])
            let passwordField = try #require(try session.step().field("password"))
            #expect(passwordField.value == nil, "a secure value is never read back")
            #expect(passwordField.isSet == true)
            #expect(try session.next() == [:])
            let accountDone = try #require(try watcher.nextSignal("StepCompleted", path: session.path) { message in
                var reader = message.arguments()
                return (try? reader.next(String.self)) == "account"
            })
            var accountArguments = accountDone.arguments()
            _ = try accountArguments.next(String.self)
            #expect(try accountArguments.next([String: DBusValue].self).isEmpty, "secure answers never go out in signals")

            // Review: one group per form step on the path, the note, masked secrets.
            #expect(try session.string("State") == "review")
            #expect(try session.string("CurrentStep") == "review")
            #expect(try session.string("ContinueLabel") == "Book")
            var review = try session.review()
            #expect(review.note == "We email you a summary.")
            #expect(review.groups.map(\.step) == ["traveller", "mode", "extras", "account"])
            #expect(review.group("traveller")?.editLabel == "Edit Traveller")
            #expect(review.group("mode")?.display("mode") == "Train")
            #expect(review.group("account")?.display("password")?.contains("correct") == false)
            #expect(review.group("account")?.display("password")?.isEmpty == false)
            #expect(review.groups.allSatisfy { $0.finished == true })
            // GetAnswers: the path's answers, without the abandoned branch or secrets.
            let answers = try session.answers()
            #expect(Set(answers.keys) == ["name", "email", "mode", "extras", "terms"])
            #expect(answers["extras"] == .strings(["wifi", "meal"]))
            #expect(answers["terms"] == .bool(true))

            // Edit: GoTo a step from Review, Continue goes straight back.
            try session.goTo("traveller")
            #expect(try session.bool("ReturningToReview") == true)
            #expect(try session.string("ContinueLabel") == "Back to review")
            #expect(try watcher.nextPropertyChange("ReturningToReview", path: session.path) == .bool(true))
            errors = try session.set(["name": " "])
            #expect(errors["name"]?.isEmpty == false)
            review = try session.review()
            #expect(review.group("traveller")?.finished == false)
            #expect(review.group("traveller")?.status == "Not finished")
            // Submit while a step is not finished leads there instead.
            expectDBusError(FlowdErrorName.validationFailed) { try session.submit() }
            #expect(try session.string("CurrentStep") == "traveller")
            #expect(try session.set(["name": "Ada King"]) == [:])
            #expect(try session.next() == [:])
            #expect(try session.string("CurrentStep") == "review")
            #expect(try session.bool("ReturningToReview") == false)
            #expect(try session.review().group("traveller")?.display("name") == "Ada King")

            // Submit: no action, so it settles at once.
            try session.submit()
            #expect(try session.string("State") == "submitted")
            #expect(try watcher.nextSignal("Submitted", path: session.path) != nil)
            #expect(try watcher.nextPropertyChange("State", path: session.path) { $0 == .string("submitted") } != nil)
            #expect(try session.step().id == "complete")
            // The outcome is announced, and can be read back.
            let outcome = try session.string("Announcement")
            #expect(!outcome.isEmpty)
            #expect(try watcher.nextSignal("Announcement", path: session.path) { message in
                var reader = message.arguments()
                return (try? reader.next(String.self)) == outcome
            } != nil, "no Announcement of the submit's outcome (\(outcome))")
            // Settled: immutable, no Back, Submit and Continue do nothing.
            try session.submit()
            #expect(try session.next() == [:])
            expectDBusError(FlowdErrorName.invalidState) { try session.back() }
            expectDBusError(FlowdErrorName.invalidState) { try session.goTo("traveller") }
            #expect(try session.bool("CanGoBack") == false)
            #expect(try session.answers()["name"] == .string("Ada King"))

            // Close: SessionRemoved, then NotFound.
            try session.close()
            let removed = try #require(try watcher.nextSignal("SessionRemoved", path: FlowClient.managerPath))
            var removedArguments = removed.arguments()
            #expect(try removedArguments.next(String.self) == session.id)
            expectDBusError(FlowdErrorName.notFound) { _ = try client.getSession(session.id) }
            expectDBusError(FlowdErrorName.notFound) { _ = try session.step() }
            #expect(try client.manager.property("SessionCount", as: UInt32.self) == 0)
        }
    }

    @Test("a flow without Review or submit action: the last Continue reads Finish-title and settles")
    func quickWithoutReview() throws {
        try withDaemon { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let session = try fixture.client.start("quick")
            #expect(try session.step().count == 2, "no Review step is counted")
            #expect(try session.string("ContinueLabel") == "Continue")
            let errors = try session.set(["stars": .int64(9)])
            #expect(errors["stars"]?.isEmpty == false)
            #expect(try session.set(["stars": .int32(5)]) == [:])
            #expect(try session.next() == [:])
            #expect(try session.string("ContinueLabel") == "Send feedback")
            #expect(try session.set(["comment": "Lovely."]) == [:])
            // Cancel with no submit running does nothing.
            try session.cancel()
            #expect(try session.state() == "editing")
            #expect(try session.next() == [:])
            #expect(try session.state() == "submitted")
            #expect(try watcher.nextSignal("Submitted", path: session.path) != nil)
            #expect(try session.answers() == ["stars": .int64(5), "comment": "Lovely."])
            // Continue again on a settled session does nothing.
            #expect(try session.next() == [:])
            #expect(try session.state() == "submitted")
            expectDBusError(FlowdErrorName.invalidState) { try session.set(["comment": "Changed"]) }
            expectDBusError(FlowdErrorName.invalidState, "Cancel on a submitted session") { try session.cancel() }
        }
    }

    @Test("locales: StartSession's locale picks the flow's and the daemon's strings")
    func locales() throws {
        try withDaemon { fixture in
            let german = try fixture.client.start("trip", options: ["locale": "de_DE.UTF-8"])
            #expect(try german.string("Locale") == "de-DE")
            #expect(try german.step().continueLabel == "Weiter")
            let flows = try fixture.client.listFlows()
            let trip = try #require(flows.first { $0["id"] == .string("trip") })
            #expect(trip["titles"]?.stringDictionary == ["en": "Plan a trip", "de": "Eine Reise planen"])
            #expect(trip["review"] == .bool(true))
            expectDBusError(FlowdErrorName.invalidArgs) { _ = try fixture.client.start("trip", options: ["locale": "no such locale!"]) }
        }
    }
}

/// The order of a call's signals: what happened first is announced first.
@Suite("Signal order")
struct SignalOrderTests {
    /// `member(first string argument)` for each signal of `path`, in order.
    static func names(_ messages: [Message], path: ObjectPath) -> [String] {
        messages.filter { $0.path == path }.map { message in
            var reader = message.arguments()
            let member = message.member?.rawValue ?? "?"
            guard member != "PropertiesChanged", let first = try? reader.next(String.self) else { return member }
            return "\(member)(\(first))"
        }
    }

    @Test("StepCompleted comes before the next step's Announcement, and before Submitted")
    func stepCompletedFirst() throws {
        try withDaemon { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let session = try fixture.client.start("quick")
            _ = try watcher.drainSignals()
            try session.set(["stars": .int64(3)])
            _ = try watcher.drainSignals()
            try session.next()
            let moved = Self.names(try watcher.drainSignals { Self.names($0, path: session.path).count >= 3 }, path: session.path)
            let completed = try #require(moved.firstIndex(of: "StepCompleted(rating)"), "\(moved)")
            let announced = try #require(moved.firstIndex(of: "Announcement(Step 2 of 2, Comment)"), "\(moved)")
            #expect(completed < announced, "\(moved)")
            #expect(completed < (moved.firstIndex(of: "PropertiesChanged") ?? .max), "\(moved)")

            // The last Continue of a flow without Review settles it.
            try session.set(["comment": "ok"])
            _ = try watcher.drainSignals()
            try session.next()
            let settled = Self.names(try watcher.drainSignals { messages in
                let names = Self.names(messages, path: session.path)
                return names.contains("Submitted") && names.contains("StepCompleted(comment)")
            }, path: session.path)
            let last = try #require(settled.firstIndex(of: "StepCompleted(comment)"), "\(settled)")
            let submitted = try #require(settled.firstIndex(of: "Submitted"), "\(settled)")
            #expect(last < submitted, "\(settled)")
        }
    }
}
