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
    /// A warning not tied to a field: said, never in the way of Continue.
    private let stepWarning = Label()
    /// What the editors report to: made once, with the step's "(optional)".
    private lazy var editorContext = EditorContext(
        report: { [weak self] answers in self?.personAnswered(answers) },
        activate: { [context] in context.send(.enterPressed) },
        strings: context.strings, optionalLabel: session.page.optionalLabel)

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
        for field in page.fields {
            let editor = FieldEditors.make(field, context: editorContext)
            editors.append(editor)
            body.column.append(editor.root)
        }
        // The step's warning, then its own rules (plugin step validators), said before the person continues.
        for label in [stepWarning, stepHints] {
            label.wraps = true
            label.xAlign = 0
            label.addStyleClass("caption")
            body.column.append(label)
        }
        stepWarning.addStyleClass("field-warning")
        stepHints.addStyleClass("dim-label")
        body.column.append(actions.root)
        update(session)
    }

    /// True when `session` can be shown by updating this page in place: the same step.
    func canShow(_ session: SessionPage) -> Bool { session.page.id == page.id && session.page.kind == page.kind }

    /// New data for the same step (errors after typing, a label, CanContinue,
    /// a field shown or hidden by another answer).
    func update(_ session: SessionPage) {
        placeEditors(for: session.page.fields)
        self.session = session
        header.update(session.page)
        contentBody.showText(page.body)
        for field in page.fields {
            guard let editor = editors.first(where: { $0.fieldID == field.id }) else { continue }
            editor.update(field)
            editor.showError(touched.visibleError(for: field))
        }
        stepWarning.showText(page.warning)
        let hints = page.ruleHints.map(\.text).filter { !$0.isEmpty }
        stepHints.showText(hints.joined(separator: "\n"))
        actions.update(session)
    }

    /// Adds the editors of fields that appeared (a `visibleIf` now holds)
    /// after the field before them, and removes those of fields that went;
    /// the others stay as they are, so the person's focus and typing are kept.
    private func placeEditors(for fields: [StepField]) {
        guard fields.map(\.id) != editors.map(\.fieldID) else { return }
        var placed: [any FieldEditor] = []
        var previous: Widget = header.root
        for field in fields {
            if let editor = editors.first(where: { $0.fieldID == field.id }) {
                placed.append(editor)
                previous = editor.root
                continue
            }
            let editor = FieldEditors.make(field, context: editorContext)
            body.column.insert(editor.root, after: previous)
            placed.append(editor)
            previous = editor.root
        }
        for editor in editors where !placed.contains(where: { $0 === editor }) { body.column.remove(editor.root) }
        editors = placed
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
