import FlowKit
import FlowProtocol

// What the window shows: the protocol's own pages (`StepPage`, `ReviewPage`,
// `FlowSummary`, read by FlowClient), and only what the window composes
// beside them (the start page's rows, a receipt's lines, a notice). Every
// text about a flow comes from the daemon.

/// What the window shows.
package enum Screen: Sendable, Hashable {
    /// The flows to begin and the person's unfinished sessions.
    case start(StartScreen)
    /// A form or content step.
    case step(SessionPage)
    /// Review: the step page of `review` (labels, progress) and `GetReview`.
    case review(SessionPage, ReviewPage)
    /// A submit is running: the page's `submittingLabel` and `cancelLabel`.
    case submitting(StepPage)
    /// The submit succeeded: the `complete` page and the receipt.
    case success(StepPage, receipt: [ReceiptLine])
    /// flowd cannot be reached, or what the window was asked to open is not there.
    case notice(NoticeScreen)
}

/// A step (or Review) as the session shows it: the daemon's page and what
/// the session's state adds to it.
package struct SessionPage: Sendable, Hashable {
    /// `GetStep`.
    package var page: StepPage
    /// The last submit failed and the page's `error` is its message: it goes
    /// under the main button, which reads the page's `retryLabel`.
    package var submitFailed: Bool
    /// After an Edit from Review (`ReturningToReview`): the main button reads
    /// "Back to review" and stays usable when the step is not finished, so
    /// the person can return to Review, which then marks the step "Not finished".
    package var returningToReview: Bool

    package init(_ page: StepPage, submitFailed: Bool = false, returningToReview: Bool = false) {
        self.page = page
        self.submitFailed = submitFailed
        self.returningToReview = returningToReview
    }

    /// The main button's label: "Try again" after a failed submit, else the daemon's Continue label.
    package var primaryLabel: String {
        submitFailed && !page.retryLabel.isEmpty ? page.retryLabel : page.continueLabel
    }

    /// The main button can be pressed: Continue is possible, or it returns to Review.
    package var primaryEnabled: Bool { page.canContinue || returningToReview }

    /// What the main button does now.
    package var primaryEvent: WindowEvent { page.canContinue || !returningToReview ? .continueStep : .backToReview }

    /// The failed submit's message, shown under the main button; or empty.
    package var failure: String { submitFailed ? page.error : "" }

    /// A step-level message not tied to a field (not a submit's failure); or empty.
    package var stepError: String { submitFailed ? "" : page.error }
}

/// The start page: the flows to begin and the person's unfinished sessions.
package struct StartScreen: Sendable, Hashable {
    /// `ListFlowsWithOptions` in the window's language: each flow's
    /// `title` and `description` are the ones to show.
    package var flows: [FlowSummary]
    package var sessions: [SessionEntry]

    package init(flows: [FlowSummary], sessions: [SessionEntry]) {
        self.flows = flows
        self.sessions = sessions
    }
}

/// An unfinished session: "Book a consultation, Step 3 of 4 · Contact
/// details, changed 5 minutes ago", from its step page and `UpdatedAt`.
package struct SessionEntry: Sendable, Hashable {
    package var id: String
    /// The page's `flowTitle` (in the session's language).
    package var flowTitle: String
    /// The page's `progressLabel`: "Step 3 of 4".
    package var progressLabel: String
    /// The current step's title.
    package var stepTitle: String
    /// `UpdatedAt`: microseconds since the epoch.
    package var updatedAt: UInt64

    package init(id: String, flowTitle: String, progressLabel: String, stepTitle: String, updatedAt: UInt64) {
        self.id = id
        self.flowTitle = flowTitle
        self.progressLabel = progressLabel
        self.stepTitle = stepTitle
        self.updatedAt = updatedAt
    }

    /// The entry of a session from its step page and properties.
    package init(page: StepPage, properties: SessionProperties) {
        self.init(
            id: properties.id, flowTitle: page.flowTitle.isEmpty ? properties.flowID : page.flowTitle,
            progressLabel: page.progressLabel, stepTitle: page.title, updatedAt: properties.updatedAt)
    }
}

/// One line of a receipt.
package struct ReceiptLine: Sendable, Hashable {
    package var label: String
    package var value: String

    package init(label: String, value: String) {
        self.label = label
        self.value = value
    }
}

/// A page that is not part of a flow: flowd cannot be reached, a session
/// is gone. The texts are the app's own, with the client's explanation.
package struct NoticeScreen: Sendable, Hashable {
    package var icon: String
    package var title: String
    package var description: String
    /// The button's label, or empty for none; it sends ``WindowEvent/retry``.
    package var retryLabel: String

    package init(icon: String, title: String, description: String, retryLabel: String = "") {
        self.icon = icon
        self.title = title
        self.description = description
        self.retryLabel = retryLabel
    }
}

/// What the person did in the window. The controller turns these into calls.
package enum WindowEvent: Sendable, Hashable {
    case startFlow(String)
    case resume(String)
    case discard(String)
    /// New answers for fields of the current step (`SetAnswers`): a field
    /// cleared is an empty text or list; Other's text is `<field>.other`.
    case answers([String: AnswerValue])
    case continueStep
    /// Enter in a single-line input: the main button's action, once the
    /// answers just typed are in (nothing when the step still cannot go on).
    case enterPressed
    /// The main button after an Edit from Review, on a step that cannot
    /// continue: `GoTo("review")`.
    case backToReview
    case back
    case edit(step: String)
    case cancelSubmit
    /// The notice's button: try what failed again.
    case retry
    /// Escape or the window's close button.
    case close
}
