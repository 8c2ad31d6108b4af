/// Review (`GetReview` plus the review step of `GetStep`).
package struct ReviewScreen: Sendable, Hashable {
    package var title: String
    /// A line under the title, or empty.
    package var description: String
    /// The note under the groups (`GetReview`'s second value), or empty.
    package var note: String
    package var groups: [ReviewGroupModel]
    package var announcement: String
    package var progress: StepProgress
    /// Continue submits; a failed submit shows its message under it.
    package var actions: StepActions

    package init(
        title: String, description: String = "", note: String = "", groups: [ReviewGroupModel], announcement: String,
        progress: StepProgress, actions: StepActions
    ) {
        self.title = title
        self.description = description
        self.note = note
        self.groups = groups
        self.announcement = announcement
        self.progress = progress
        self.actions = actions
    }
}

/// One step on Review.
package struct ReviewGroupModel: Sendable, Hashable {
    /// The step id: Edit goes there.
    package var step: String
    package var title: String
    package var finished: Bool
    /// Empty, or "Not finished".
    package var status: String
    /// "Edit Day and time".
    package var editLabel: String
    package var answers: [ReviewAnswerModel]

    package init(
        step: String, title: String, finished: Bool = true, status: String = "", editLabel: String,
        answers: [ReviewAnswerModel]
    ) {
        self.step = step
        self.title = title
        self.finished = finished
        self.status = status
        self.editLabel = editLabel
        self.answers = answers
    }
}

/// One answer on Review, as the daemon displays it (option labels, yes/no, a
/// mask for a secure field, "Not given").
package struct ReviewAnswerModel: Sendable, Hashable {
    package var field: String
    package var label: String
    package var display: String

    package init(field: String, label: String, display: String) {
        self.field = field
        self.label = label
        self.display = display
    }
}
