import FlowKit
import FlowKitTesting
import Testing

/// FlowKitTesting's samples are what flowd hands a plugin.
@Suite struct TestingSamples {
    @Test func contextsCarryWhatTheyWereGiven() {
        let context = PluginContext.testing(locale: "pt-BR", answers: ["day": .date(CivilDate(year: 2024, month: 6, day: 3)!)],
                                            options: ["count": 5])
        #expect(context.locale == "pt-BR")
        #expect(context.sessionID.count == 32)
        #expect(context.answers["day"] == .text("2024-06-03"))
        #expect(context.options["count"]?.intValue == 5)
        let rule = PluginContext.testingRuleDescription(locale: "de")
        #expect(rule.sessionID.isEmpty && rule.answers.isEmpty && rule.callerUID == 0)
    }

    @Test func deadlines() {
        #expect(PluginContext.testing().deadline == nil && PluginContext.testing().timeRemaining == nil)
        let context = PluginContext.testing(timeLimit: .seconds(5))
        let left = context.timeRemaining
        #expect(left != nil && left! <= .seconds(5) && left! >= .zero)
        var passed = context
        passed.deadline = ContinuousClock.now.advanced(by: .seconds(-3))
        #expect(passed.timeRemaining == .zero, "never negative")
    }

    @Test func submissionsAndSteps() {
        let submission = Submission.testing(answers: ["name": .text("Ada")], secureAnswers: ["pin": "1234"])
        #expect(submission.id == TestValues.submissionID)
        #expect(submission.answers["name"] == .text("Ada"))
        #expect(submission.secureAnswers["pin"] == "1234")
        let step = StepInfo.testing(fields: [.testing("from", type: "date"), .testing("to", type: "date")])
        #expect(step.fields.map(\.id) == ["from", "to"])
        #expect(AnswerValue.time(CivilTime(hour: 9, minute: 5)!) == .text("09:05"))
        #expect(TestValues.locales.contains("sv"), "one language flowd has no strings for")
    }
}
