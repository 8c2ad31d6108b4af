import Adwaita
import FlowKit

/// A form or content step: header, fields (or the content's icon and text), buttons.
@MainActor
final class StepPage: Page {
    private(set) var screen: StepScreen
    private let body = PageColumn()
    private let header = StepHeader()
    private let actions: ActionBar
    private var editors: [any FieldEditor] = []
    private var touched = TouchedFields()
    private let context: PageContext
    private let contentIcon: Image?
    private let contentBody = Label()

    var root: Widget { body.root }
    var defaultButton: Button? { actions.primary }

    init(_ screen: StepScreen, context: PageContext) {
        self.screen = screen
        self.context = context
        actions = ActionBar(actions: screen.actions, send: context.send)
        body.column.append(header.root)
        if screen.kind == .content, !screen.icon.isEmpty {
            let icon = Image(iconName: screen.icon, pixelSize: 96)
            icon.addStyleClass("dim-label")
            icon.setMargins(top: 12, bottom: 6)
            body.column.append(icon)
            contentIcon = icon
        } else {
            contentIcon = nil
        }
        if screen.kind == .content {
            contentBody.wraps = true
            contentBody.xAlign = 0
            contentBody.isSelectable = true
            body.column.append(contentBody)
        }
        let editorContext = EditorContext(
            report: { [weak self] answers in self?.personAnswered(answers) },
            activate: { [weak self] in self?.enterPressed() },
            strings: context.strings)
        for field in screen.fields {
            let editor = FieldEditors.make(field, context: editorContext)
            editors.append(editor)
            body.column.append(editor.root)
        }
        body.column.append(actions.root)
        update(screen)
    }

    /// New data for the same step (errors after typing, a label, CanContinue).
    func update(_ screen: StepScreen) {
        self.screen = screen
        header.update(progress: screen.progress, title: screen.title, description: screen.description)
        contentBody.text = screen.body
        contentBody.isVisible = !screen.body.isEmpty
        for field in screen.fields {
            guard let editor = editors.first(where: { $0.fieldID == field.id }) else { continue }
            editor.update(field)
            editor.showError(touched.visibleError(for: field))
        }
        actions.update(screen.actions, stepError: screen.error)
    }

    /// After a Continue the daemon refused: every field's error shows, touched or not.
    func revealAllErrors() {
        for field in screen.fields { touched.touch(field.id) }
        update(screen)
    }

    func focusFirst() {
        if screen.actions.failure != nil {
            // A failed submit (a flow without Review): its message is under the button, at the end.
            actions.primary.grabFocus()
            body.root.scrollToEnd()
        } else if let first = editors.first {
            first.focusTarget.grabFocus()
        } else {
            actions.primary.grabFocus()
        }
    }

    private func personAnswered(_ answers: [String: AnswerValue]) {
        for key in answers.keys {
            // `<field>.other` touches its field.
            let id = screen.fields.first { $0.id == key || $0.otherKey == key }?.id ?? key
            touched.touch(id)
            if let field = screen.fields.first(where: { $0.id == id }),
                let editor = editors.first(where: { $0.fieldID == id })
            {
                editor.showError(touched.visibleError(for: field))
            }
        }
        context.send(.answers(answers))
    }

    private func enterPressed() {
        if screen.actions.canContinue { context.send(.continueStep) }
    }
}
