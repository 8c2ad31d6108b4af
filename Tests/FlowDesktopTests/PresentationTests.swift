import Adwaita
import FlowEngine
import FlowKit
import FlowProtocol
import Testing

@testable import FlowDesktop

private func choice(_ labels: [String], other: String? = nil, type: FieldType = .choice) -> StepField {
    var field = StepField(id: "f", type: type, label: "Pick")
    field.options = labels.enumerated().map { ChoiceOption(id: "o\($0.offset)", label: $0.element) }
    if let other {
        field.other = true
        field.otherLabel = other
    }
    return field
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
        var field = StepField(id: "email", type: .email, label: "E-mail")
        field.error = "Please enter a valid email address."
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
    static func page(_ id: String, _ index: Int, kind: StepView.Kind = .form) -> StepPage {
        var page = StepPage(id: id, kind: kind, title: id)
        page.index = index
        page.count = 4
        return page
    }

    func step(_ id: String, _ index: Int) -> Screen { .step(SessionPage(Self.page(id, index))) }

    var review: Screen { .review(SessionPage(Self.page("review", 4, kind: .review)), ReviewPage(groups: [], note: "")) }

    @Test("further along is forward, back along the path is back, the same step is updated in place")
    func directions() {
        #expect(Navigation.direction(from: nil, to: step("a", 1)) == .forward)
        #expect(Navigation.direction(from: step("a", 1), to: step("b", 2)) == .forward)
        #expect(Navigation.direction(from: step("b", 2), to: step("a", 1)) == .back)
        #expect(Navigation.direction(from: step("b", 2), to: step("b", 2)) == .same)
        #expect(Navigation.direction(from: review, to: step("b", 2)) == .back, "Edit from Review")
        #expect(Navigation.direction(from: step("b", 2), to: review) == .forward, "Back to review")
        #expect(Navigation.direction(from: step("b", 2), to: step("c", 2)) == .forward, "a branch replaced the step")
        let submitting = Screen.submitting(Self.page("review", 4, kind: .review))
        #expect(Navigation.direction(from: review, to: submitting) == .forward)
        #expect(Navigation.direction(from: submitting, to: review) == .back, "Cancel while sending")
        let start = Screen.start(StartScreen(flows: [], sessions: []))
        #expect(Navigation.direction(from: step("b", 2), to: start) == .back, "Escape: back to the start page")
        #expect(Navigation.direction(from: start, to: step("a", 1)) == .forward)
        let success = Screen.success(Self.page("complete", 4, kind: .complete), receipt: [])
        #expect(Navigation.direction(from: submitting, to: success) == .forward)
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
        field.value = .strings(["o2"])
        var s = ChoiceSelection(field: field)
        s.set("o0", true)
        s.set("o0", true)
        s.set(StepField.otherOptionID, true)
        #expect(s.answer == .list(["o2", "o0", "other"]))
        s.set("o2", false)
        #expect(s.answer == .list(["o0", "other"]))
    }
}

@Suite("date bounds")
struct DateBoundsTests {
    @Test("the calendar opens on the first day after the lower bound")
    func firstAllowedDay() {
        #expect(DateEditor.firstAllowedDay(after: CivilDate(year: 2024, month: 2, day: 28))
            == CivilDate(year: 2024, month: 2, day: 29))
        #expect(DateEditor.firstAllowedDay(after: CivilDate(year: 2025, month: 12, day: 31))
            == CivilDate(year: 2026, month: 1, day: 1))
        #expect(DateEditor.firstAllowedDay(after: nil) == nil)
        var field = StepField(id: "day", type: .date, label: "Day")
        field.after = "2025-06-01"
        field.before = "not a date"
        #expect(field.earliest == CivilDate(year: 2025, month: 6, day: 1) && field.latest == nil)
    }
}

@Suite("the session's page in the window")
struct SessionPageTests {
    static func page(canContinue: Bool, error: String = "") -> StepPage {
        var page = StepPage(id: "contact", kind: .form, title: "Contact")
        page.continueLabel = "Back to review"
        page.retryLabel = "Try again"
        page.canContinue = canContinue
        page.error = error
        return page
    }

    @Test("the main button: Continue bound to CanContinue; after an Edit it returns to Review even when the step is not finished")
    func primaryButton() {
        let valid = SessionPage(Self.page(canContinue: true))
        #expect(valid.primaryEnabled && valid.primaryEvent == .continueStep && valid.primaryLabel == "Back to review")
        let invalid = SessionPage(Self.page(canContinue: false))
        #expect(!invalid.primaryEnabled && invalid.primaryEvent == .continueStep)
        let returning = SessionPage(Self.page(canContinue: false), returningToReview: true)
        #expect(returning.primaryEnabled && returning.primaryEvent == .backToReview)
        let returningValid = SessionPage(Self.page(canContinue: true), returningToReview: true)
        #expect(returningValid.primaryEvent == .continueStep, "a finished step continues, so its answers are checked")
    }

    @Test("a failed submit's message goes under the main button, which reads Try again; a step message stays a step message")
    func failure() {
        let failed = SessionPage(Self.page(canContinue: true, error: "The calendar is full."), submitFailed: true)
        #expect(failed.primaryLabel == "Try again" && failed.failure == "The calendar is full." && failed.stepError == "")
        let step = SessionPage(Self.page(canContinue: false, error: "These must match."))
        #expect(step.primaryLabel == "Back to review" && step.failure == "" && step.stepError == "These must match.")
    }

    @Test("Continue submits on the last step of a flow without Review, and only there")
    func continueSubmits() {
        let page = Self.page(canContinue: true)
        let noReview = [PathStep(step: "who", title: "Who", status: .done), PathStep(step: "contact", title: "Contact", status: .current)]
        #expect(WindowController.continueSubmits(page: page, path: noReview))
        #expect(!WindowController.continueSubmits(page: page, path: noReview + [PathStep(step: "review", title: "Review", status: .upcoming)]))
        #expect(!WindowController.continueSubmits(page: page, path: Array(noReview.reversed())))
    }
}

@Suite("fields as the window reads them")
struct FieldPresentationTests {
    @Test("(optional) from the daemon, only where no rule can make the field required")
    func optionalMarker() {
        var field = StepField(id: "phone", type: .text, label: "Phone")
        #expect(field.displayLabel(optionalLabel: "(optional)") == "Phone (optional)")
        #expect(field.displayLabel(optionalLabel: "") == "Phone", "a 1.0 daemon gives no label: none is made up")
        #expect(field.displayLabel(optionalLabel: "（任意）") == "Phone（任意）")
        field.conditionallyRequired = true
        #expect(field.displayLabel(optionalLabel: "(optional)") == "Phone", "its hint says when it is required")
        field.conditionallyRequired = false
        field.required = true
        #expect(field.displayLabel(optionalLabel: "(optional)") == "Phone")
        var terms = StepField(id: "terms", type: .toggle, label: "I accept the terms")
        terms.mustBeOn = true
        #expect(terms.displayLabel(optionalLabel: "(optional)") == "I accept the terms", "a toggle that must be on is not optional")
    }

    @Test("the answer held comes back as a value; Other is the last choice")
    func answersAndChoices() {
        var field = StepField(id: "n", type: .number, label: "N")
        field.value = .int64(42)
        #expect(field.answer == .integer(42))
        field.value = nil
        #expect(field.answer == nil)
        let other = choice(["a"], other: "Something else")
        #expect(other.choices.map(\.id) == ["o0", "other"] && other.choices.last?.label == "Something else")
        #expect(other.otherKey == "f.other")
    }

    @Test("a receipt lists its reference first, under the app's label; other keys as they are")
    func receipt() {
        let lines = ReceiptLines.make(
            ["status": "queued", "reference": "R-1", "count": .double(3), "nested": .vardict(["a": "b"])],
            referenceLabel: "Referenz")
        #expect(lines == [ReceiptLine(label: "Referenz", value: "R-1"), ReceiptLine(label: "count", value: "3"),
                          ReceiptLine(label: "status", value: "queued")])
    }
}
