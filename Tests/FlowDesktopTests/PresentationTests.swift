import Adwaita
import FlowEngine
import FlowKit
import Testing

@testable import FlowDesktop

private func choice(_ labels: [String], other: String? = nil, type: FieldType = .choice) -> FieldModel {
    FieldModel(
        id: "f", type: type, label: "Pick",
        options: labels.enumerated().map { OptionModel(id: "o\($0.offset)", label: $0.element) },
        other: other.map { OtherOption(label: $0) })
}

@Suite("choice style")
struct ChoiceStyleTests {
    @Test("a few short options are chips; many, long or none are rows")
    func chipsOrRows() {
        #expect(ChoiceStyle.of(choice(["Just me", "2–10", "More than 10"])) == .chips)
        #expect(ChoiceStyle.of(choice(["Design", "Code", "Hosting", "Writing"], other: "Other", type: .multichoice)) == .chips)
        #expect(ChoiceStyle.of(choice(["a", "b", "c", "d", "e"], other: "Other")) == .rows, "six with Other")
        #expect(ChoiceStyle.of(choice(["Short", "A website with a shop and a blog"])) == .rows)
        #expect(ChoiceStyle.of(choice([])) == .rows)
        #expect(ChoiceStyle.of(choice(["Yes"], other: "Something else entirely, thanks")) == .rows, "Other's label counts")
    }
}

@Suite("mnemonics")
struct MnemonicsTests {
    @Test("each label gets the first letter no earlier label took")
    func firstFreeLetter() {
        #expect(Mnemonics.assign(["Continue", "Back"]) == ["_Continue", "_Back"])
        #expect(Mnemonics.assign(["Back to review", "Back"]) == ["_Back to review", "B_ack"])
        #expect(Mnemonics.assign(["Weiter", "Zurück"]) == ["_Weiter", "_Zurück"])
        #expect(Mnemonics.assign(["Book"], taken: ["b"]) == ["B_ook"])
    }

    @Test("an underscore in daemon text is shown, not taken as a mark; a label without a free letter gets none")
    func underscoresAndExhaustion() {
        #expect(Mnemonics.assign(["snake_case"]) == ["_snake__case"])
        #expect(Mnemonics.assign(["ab", "ba", "ab"]) == ["_ab", "_ba", "ab"], "the third finds both letters taken")
        #expect(Mnemonics.assign(["予約する"]) == ["_予約する"])
        #expect(Mnemonics.assign(["2–10"]) == ["2–10"], "digits and dashes are not letters")
    }
}

@Suite("touched fields")
struct TouchedFieldsTests {
    @Test("an error shows only once its field was touched")
    func errorsAfterTouch() {
        let field = FieldModel(id: "email", type: .email, label: "E-mail", error: "Please enter a valid email address.")
        var touched = TouchedFields()
        #expect(touched.visibleError(for: field) == "")
        touched.touch("name")
        #expect(touched.visibleError(for: field) == "")
        touched.touch("email")
        #expect(touched.visibleError(for: field) == "Please enter a valid email address.")
        var valid = field
        valid.error = ""
        #expect(touched.visibleError(for: valid) == "")
    }
}

@Suite("navigation")
struct NavigationTests {
    func step(_ id: String, _ index: Int) -> Screen {
        .step(StepScreen(
            id: id, title: id, announcement: "", progress: StepProgress(index: index, count: 4, label: ""),
            actions: StepActions(continueLabel: "Continue", backLabel: "Back", canContinue: true, canGoBack: true)))
    }

    var review: Screen {
        .review(ReviewScreen(
            title: "Review", groups: [], announcement: "", progress: StepProgress(index: 4, count: 4, label: ""),
            actions: StepActions(continueLabel: "Submit", backLabel: "Back", canContinue: true, canGoBack: true)))
    }

    @Test("further along is forward, back along the path is back, the same step is updated in place")
    func directions() {
        #expect(Navigation.direction(from: nil, to: step("a", 1)) == .forward)
        #expect(Navigation.direction(from: step("a", 1), to: step("b", 2)) == .forward)
        #expect(Navigation.direction(from: step("b", 2), to: step("a", 1)) == .back)
        #expect(Navigation.direction(from: step("b", 2), to: step("b", 2)) == .same)
        #expect(Navigation.direction(from: review, to: step("b", 2)) == .back, "Edit from Review")
        #expect(Navigation.direction(from: step("b", 2), to: review) == .forward, "Back to review")
        #expect(Navigation.direction(from: step("b", 2), to: step("c", 2)) == .forward, "a branch replaced the step")
        let submitting = Screen.submitting(SubmittingScreen(message: "Sending…", cancelLabel: "Cancel", announcement: ""))
        #expect(Navigation.direction(from: review, to: submitting) == .forward)
        #expect(Navigation.direction(from: submitting, to: review) == .back, "Cancel while sending")
    }

    @Test("slides from the side the screen comes from; a crossfade when animations are off")
    func transitions() {
        #expect(Navigation.transition(.forward, animationsEnabled: true) == .slideForward)
        #expect(Navigation.transition(.back, animationsEnabled: true) == .slideBack)
        #expect(Navigation.transition(.forward, animationsEnabled: false) == .crossfade)
        #expect(Navigation.transition(.back, animationsEnabled: false) == .crossfade)
        #expect(Navigation.transition(.same, animationsEnabled: true) == StackTransition.none)
    }
}

@Suite("number text")
struct NumberTextTests {
    @Test("typed text becomes the answer SetAnswers takes")
    func answers() {
        #expect(NumberText.answer(for: "42", integer: true) == .integer(42))
        #expect(NumberText.answer(for: " 42 ", integer: false) == .integer(42))
        #expect(NumberText.answer(for: "12,5", integer: false) == .number(12.5))
        #expect(NumberText.answer(for: "1,000.5", integer: false) == .text("1,000.5"), "a thousands comma is not a decimal")
        #expect(NumberText.answer(for: "12.5", integer: true) == .number(12.5), "the daemon refuses the fraction")
        #expect(NumberText.answer(for: "", integer: true) == .text(""), "empty clears the answer")
        #expect(NumberText.answer(for: "abc", integer: false) == .text("abc"), "the daemon says what is wrong")
        #expect(NumberText.answer(for: "inf", integer: false) == .text("inf"))
    }

    @Test("answers held by the daemon are shown without a needless fraction")
    func display() {
        #expect(NumberText.display(.integer(7)) == "7")
        #expect(NumberText.display(.number(7)) == "7")
        #expect(NumberText.display(.number(2.5)) == "2.5")
        #expect(NumberText.display(nil) == "")
    }
}

@Suite("choice selection")
struct ChoiceSelectionTests {
    @Test("a single choice keeps one option; releasing it clears the answer")
    func single() {
        var s = ChoiceSelection(field: choice(["a", "b"]))
        s.set("o0", true)
        s.set("o1", true)
        #expect(s.answer == .text("o1"))
        s.set("o0", false)
        #expect(s.answer == .text("o1"), "releasing another option changes nothing")
        s.set("o1", false)
        #expect(s.answer == .text(""))
    }

    @Test("a multiple choice keeps the order chosen and never repeats")
    func multiple() {
        var field = choice(["a", "b", "c"], type: .multichoice)
        field.value = .list(["o2"])
        var s = ChoiceSelection(field: field)
        s.set("o0", true)
        s.set("o0", true)
        s.set(FieldModel.otherOptionID, true)
        #expect(s.answer == .list(["o2", "o0", "other"]))
        s.set("o2", false)
        #expect(s.answer == .list(["o0", "other"]))
    }
}

@Suite("date bounds")
struct DateBoundsTests {
    @Test("the calendar opens on the first day after the lower bound")
    func firstAllowedDay() {
        #expect(DateEditor.firstAllowedDay(DateBounds(after: CivilDate(year: 2024, month: 2, day: 28)))
            == CivilDate(year: 2024, month: 2, day: 29))
        #expect(DateEditor.firstAllowedDay(DateBounds(after: CivilDate(year: 2025, month: 12, day: 31)))
            == CivilDate(year: 2026, month: 1, day: 1))
        #expect(DateEditor.firstAllowedDay(DateBounds(before: CivilDate(year: 2025, month: 1, day: 1))) == nil)
        #expect(DateEditor.firstAllowedDay(nil) == nil)
    }
}
