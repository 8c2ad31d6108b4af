import Adwaita
import FlowKit
import FlowProtocol

/// A form or content step: header, fields (or the content's icon and text),
/// the step's rule hints, buttons.
@MainActor
final class StepPageView: Page {
    private(set) var session: SessionPage
    private var page: StepPage { session.page }
    private let body = PageColumn()
    private let header = StepHeader()
    private let actions: ActionBar
    private var editors: [any FieldEditor] = []
    private var touched = TouchedFields()
    private let context: PageContext
    private let contentBody = Label()
    private let stepHints = Label()

    var root: Widget { body.root }
    var defaultButton: Button? { actions.primary }

    init(_ session: SessionPage, context: PageContext) {
        self.session = session
        self.context = context
        actions = ActionBar(send: context.send)
        let page = session.page
        body.column.append(header.root)
        if page.kind == .content, !page.icon.isEmpty {
            let icon = Image(iconName: page.icon, pixelSize: 96)
            icon.addStyleClass("dim-label")
            icon.setMargins(top: 12, bottom: 6)
            body.column.append(icon)
        }
        if page.kind == .content {
            contentBody.wraps = true
            contentBody.xAlign = 0
            contentBody.isSelectable = true
            body.column.append(contentBody)
        }
        let editorContext = EditorContext(
            report: { [weak self] answers in self?.personAnswered(answers) },
            activate: { context.send(.enterPressed) },
            strings: context.strings, optionalLabel: page.optionalLabel)
        for field in page.fields {
            let editor = FieldEditors.make(field, context: editorContext)
            editors.append(editor)
            body.column.append(editor.root)
        }
        // The step's own rules (plugin step validators), said before the person continues.
        stepHints.wraps = true
        stepHints.xAlign = 0
        stepHints.addStyleClass("dim-label")
        stepHints.addStyleClass("caption")
        body.column.append(stepHints)
        body.column.append(actions.root)
        update(session)
    }

    /// The field ids of the step, in order: the same step with other fields
    /// (a field that appeared or went) is a new page.
    static func layout(of page: StepPage) -> [String] { page.fields.map { $0.id + ":" + $0.type.rawValue } }

    /// True when `session` can be shown by updating this page in place.
    func canShow(_ session: SessionPage) -> Bool {
        session.page.id == page.id && Self.layout(of: session.page) == Self.layout(of: page)
    }

    /// New data for the same step (errors after typing, a label, CanContinue).
    func update(_ session: SessionPage) {
        self.session = session
        header.update(session.page)
        contentBody.text = page.body
        contentBody.isVisible = !page.body.isEmpty
        for field in page.fields {
            guard let editor = editors.first(where: { $0.fieldID == field.id }) else { continue }
            editor.update(field)
            editor.showError(touched.visibleError(for: field))
        }
        let hints = page.ruleHints.map(\.text).filter { !$0.isEmpty }
        stepHints.text = hints.joined(separator: "\n")
        stepHints.isVisible = !hints.isEmpty
        actions.update(session)
    }

    /// After a Continue (or a Submit) the daemon refused: every field's
    /// error shows, touched or not.
    func revealAllErrors() {
        for field in page.fields { touched.touch(field.id) }
        update(session)
    }

    func focusFirst() {
        if session.submitFailed {
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
            let id = page.fields.first { $0.id == key || $0.otherKey == key }?.id ?? key
            touched.touch(id)
            if let field = page.fields.first(where: { $0.id == id }),
                let editor = editors.first(where: { $0.fieldID == id })
            {
                editor.showError(touched.visibleError(for: field))
            }
        }
        context.send(.answers(answers))
    }
}
