import Adwaita
import FlowProtocol

/// Review: a group per step with its answers, "Not finished" on a step
/// that is not, an Edit button per group, then Submit.
@MainActor
final class ReviewPageView: Page {
    private let body = PageColumn()
    private let header = StepHeader()
    private let actions: ActionBar
    private let groupsBox = Box(.vertical, spacing: 18)
    private let note = Label()
    private var groupWidgets: [PreferencesGroup] = []
    private var firstEdit: Button?
    private var hasFailure = false
    private let send: @MainActor (WindowEvent) -> Void

    var root: Widget { body.root }
    var defaultButton: Button? { actions.primary }

    init(_ session: SessionPage, review: ReviewPage, context: PageContext) {
        send = context.send
        actions = ActionBar(send: context.send)
        note.wraps = true
        note.xAlign = 0
        note.addStyleClass("dim-label")
        body.column.append(header.root)
        body.column.append(groupsBox)
        body.column.append(note)
        body.column.append(actions.root)
        update(session, review: review)
    }

    func update(_ session: SessionPage, review: ReviewPage) {
        // The step page's description on Review is the flow's note: shown once, under the groups.
        header.update(session.page, description: "")
        while let child = groupWidgets.popLast() { groupsBox.remove(child) }
        firstEdit = nil
        for group in review.groups {
            let widget = PreferencesGroup(title: group.title)
            let edit = Button(label: group.editLabel)
            edit.addStyleClass("flat", "edit-link")
            edit.verticalAlignment = .center
            let step = group.step
            edit.onClicked { [send] in send(.edit(step: step)) }
            widget.setHeaderSuffix(edit)
            if firstEdit == nil { firstEdit = edit }
            if !group.status.isEmpty {
                // "Not finished" first in the group, with a warning sign.
                let status = ActionRow(title: group.status)
                status.addPrefix(Image(iconName: "dialog-warning-symbolic"))
                status.addStyleClass("review-status")
                widget.add(status)
            }
            for answer in group.answers {
                widget.add(AnswerRow.make(label: answer.label, value: answer.display))
            }
            widget.setAccessibleLabel(group.status.isEmpty ? group.title : group.title + ", " + group.status)
            groupsBox.append(widget)
            groupWidgets.append(widget)
        }
        note.showText(review.note)
        actions.update(session)
        hasFailure = session.submitFailed
    }

    func focusFirst() {
        if actions.primary.isSensitive { actions.primary.grabFocus() } else { firstEdit?.grabFocus() }
        // A failed submit's message is under the button, the last thing on the page;
        // otherwise the person reads Review from the top (Enter still submits).
        if hasFailure { body.root.scrollToEnd() } else { body.root.scrollToStart() }
    }
}
