import Adwaita
import FlowKit

/// Stands in for flowd behind the window in fixture mode: shows a fixture's
/// screens, prints every event the window reports (`event: …`, secure
/// answers masked) and every screen it shows (`screen: …`) on standard
/// output for the headless suite, and in the `tour` fixture moves between
/// screens the way a session would.
///
/// Screens are built off the main thread and handed to the main actor, so
/// every fixture also proves that async work reaches the GTK thread.
@MainActor
package final class FixtureDriver {
    private let name: String
    private let fixtures: Fixtures
    private var window: FlowWindow?
    // The tour's state.
    private var start: StartScreen
    private var steps: [StepScreen]
    private var returning = false
    private var submits = 0

    package init(name: String, fixtures: Fixtures) {
        self.name = name
        self.fixtures = fixtures
        start = fixtures.start
        steps = [fixtures.serviceStep, fixtures.whenStep, fixtures.contact(canContinue: true)]
    }

    /// Drives `window`, starting with the fixture's first screen.
    package func run(in window: FlowWindow) {
        self.window = window
        window.setFlowTitle(name == "start" || name == "tour" ? "" : fixtures.t("Book a consultation", "Beratung buchen"))
        deliverFromAnotherThread { [fixtures, name] in fixtures.screen(name) }
    }

    /// Builds a screen on another thread and shows it from the main actor.
    private func deliverFromAnotherThread(_ build: @escaping @Sendable () -> Screen?) {
        Task.detached {
            guard let screen = build() else { return }
            await MainActor.run { self.show(screen) }
        }
    }

    private func show(_ screen: Screen) {
        guard let window else { return }
        let transition = window.show(screen)
        Console.line("screen: " + Navigation.identity(of: screen) + " " + FixtureDriver.name(of: transition))
    }

    private static func name(of transition: StackTransition) -> String {
        switch transition {
        case .slideForward: return "slide-forward"
        case .slideBack: return "slide-back"
        case .crossfade: return "crossfade"
        case .none: return "none"
        }
    }

    /// What the person did.
    package func handle(_ event: WindowEvent) {
        Console.line("event: " + describe(event))
        if case .close = event {
            window?.destroy()
            return
        }
        guard name == "tour", let screen = window?.screen else { return }
        switch (screen, event) {
        case (.start, .startFlow):
            window?.setFlowTitle(fixtures.t("Book a consultation", "Beratung buchen"))
            show(.step(steps[0]))
        case (.start, .resume):
            window?.setFlowTitle(fixtures.t("Book a consultation", "Beratung buchen"))
            show(.step(steps[2]))
        case (.start, .discard(let id)):
            start.sessions.removeAll { $0.id == id }
            show(.start(start))
        case (.step(let step), .continueStep):
            guard let i = steps.firstIndex(where: { $0.id == step.id }) else { return }
            if returning || i == steps.count - 1 {
                returning = false
                show(.review(fixtures.review(failure: nil, unfinished: false)))
            } else {
                show(.step(steps[i + 1]))
            }
        case (.step(let step), .back):
            guard let i = steps.firstIndex(where: { $0.id == step.id }), i > 0 else { return }
            show(.step(steps[i - 1]))
        case (.review, .back):
            show(.step(steps[steps.count - 1]))
        case (.review, .edit(let id)):
            guard var step = steps.first(where: { $0.id == id }) else { return }
            returning = true
            step.actions = fixtures.actions(canGoBack: step.actions.canGoBack, returning: true)
            show(.step(step))
        case (.review, .continueStep):
            submits += 1
            switch submits {
            case 1: show(.submitting(fixtures.submitting))
            case 2: show(.review(fixtures.review(failure: fixtures.failure, unfinished: false)))
            default:
                show(.submitting(fixtures.submitting))
                deliverFromAnotherThread { [fixtures] in .success(fixtures.success) }
            }
        case (.submitting, .cancelSubmit):
            show(.review(fixtures.review(failure: nil, unfinished: false)))
        default:
            break
        }
    }

    /// One line per event; a secure field's answer never appears.
    private func describe(_ event: WindowEvent) -> String {
        switch event {
        case .startFlow(let id): return "start " + id
        case .resume(let id): return "resume " + id
        case .discard(let id): return "discard " + id
        case .continueStep: return "continue"
        case .back: return "back"
        case .edit(let step): return "edit " + step
        case .cancelSubmit: return "cancel"
        case .close: return "close"
        case .answers(let answers):
            let secure = Set(currentFields.filter { $0.type == .secure }.map(\.id))
            let parts = answers.keys.sorted().map { key in
                key + "=" + (secure.contains(key) ? "<secure>" : describe(answers[key]))
            }
            return "answers " + parts.joined(separator: " ")
        }
    }

    private var currentFields: [FieldModel] {
        if case .step(let s) = window?.screen { return s.fields }
        return []
    }

    private func describe(_ value: AnswerValue?) -> String {
        switch value {
        case .text(let s): return "\"" + s + "\""
        case .list(let l): return "[" + l.joined(separator: ",") + "]"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .number(let d): return String(d)
        case nil: return "nil"
        }
    }
}
