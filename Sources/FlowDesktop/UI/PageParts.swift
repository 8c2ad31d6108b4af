import Adwaita
import FlowKit
import FlowProtocol

/// What every page is given by the window.
@MainActor
struct PageContext {
    let strings: AppStrings
    /// Reports what the person did.
    let send: @MainActor (WindowEvent) -> Void
    /// Now, in microseconds since the epoch (relative times).
    let now: @MainActor () -> UInt64
}

/// One screen's widgets, as the window's stack holds them.
@MainActor
protocol Page: AnyObject {
    var root: Widget { get }
    /// The button Enter activates when the focused widget does not use Enter.
    var defaultButton: Button? { get }
    /// Puts the focus where a person starts: the first field, else the main button.
    func focusFirst()
}

/// A page's scrolling body: a column at a readable width.
@MainActor
final class PageColumn {
    let column = Box(.vertical, spacing: 18)
    let root: ScrolledWindow

    init() {
        column.setMargins(top: 24, bottom: 30, start: 18, end: 18)
        root = ScrolledWindow(child: Clamp(maximumSize: 620, child: column))
        root.expandsVertically = true
    }
}

/// "Step 2 of 4" over a row of segments, then the title and description.
@MainActor
final class StepHeader {
    let root = Box(.vertical, spacing: 6)
    private let progressLabel = Label()
    private let segments = SegmentBar()
    private let title = Label()
    private let subtitle = Label()

    init() {
        progressLabel.xAlign = 0
        progressLabel.addStyleClass("caption-heading", "dim-label")
        segments.addStyleClass("step-segments")
        title.xAlign = 0
        title.wraps = true
        title.addStyleClass("title-1")
        title.setMargins(top: 12)
        subtitle.xAlign = 0
        subtitle.wraps = true
        subtitle.addStyleClass("dim-label")
        for w in [progressLabel, segments, title, subtitle] as [Widget] { root.append(w) }
    }

    /// The page's "Step 2 of 4", its segments, title and description.
    func update(_ page: StepPage, title text: String? = nil, description: String? = nil) {
        progressLabel.showText(page.progressLabel)
        segments.set(filled: page.index, of: page.count)
        // The segments read as the same words as the label above them.
        segments.setAccessibleLabel(page.progressLabel)
        title.text = text ?? page.title
        let line = description ?? page.description
        subtitle.showText(line)
    }
}

/// Back and Continue under a step (or Review's Submit), and a failed
/// submit's message under the main button, which then reads "Try again".
@MainActor
final class ActionBar {
    let root = Box(.vertical, spacing: 8)
    let back: Button
    let primary: Button
    private let failureLabel = Label()
    private let stepError = Label()

    private var primaryEvent = WindowEvent.continueStep

    init(send: @escaping @MainActor (WindowEvent) -> Void) {
        back = Button(mnemonic: "")
        primary = Button(mnemonic: "")
        primary.addStyleClass("suggested-action", "pill")
        back.addStyleClass("pill")
        let row = Box(.horizontal, spacing: 12)
        row.setMargins(top: 12)
        // Both expand, so the main button stays at the end side when Back is hidden.
        back.horizontalAlignment = .start
        back.expandsHorizontally = true
        primary.horizontalAlignment = .end
        primary.expandsHorizontally = true
        row.append(back)
        row.append(primary)
        for label in [stepError, failureLabel] {
            label.wraps = true
            label.addStyleClass("field-error")
        }
        stepError.xAlign = 0
        failureLabel.xAlign = 1
        root.append(stepError)
        root.append(row)
        root.append(failureLabel)
        back.onClicked { send(.back) }
        primary.onClicked { [unowned self] in send(primaryEvent) }
    }

    /// The buttons of `session`: labels, what they can do, the messages.
    func update(_ session: SessionPage) {
        let page = session.page
        let marked = Mnemonics.assign([session.primaryLabel, page.backLabel])
        primary.label = marked[0]
        back.label = marked[1]
        primary.isSensitive = session.primaryEnabled
        primaryEvent = session.primaryEvent
        back.isVisible = page.canGoBack
        stepError.showText(session.stepError)
        let failure = session.failure
        failureLabel.showText(failure)
        // A screen reader hears the failure when it reaches the button.
        primary.setAccessibleDescription(failure)
        primary.setDescribedBy(failure.isEmpty ? nil : failureLabel)
    }
}

/// A row showing one answer (Review) or receipt line: the value reads first,
/// its label is the quiet line above it; a screen reader hears "label: value".
@MainActor
enum AnswerRow {
    static func make(label: String, value: String) -> ActionRow {
        let row = ActionRow(title: label, subtitle: value, wraps: true)
        row.addStyleClass("review-answer")
        row.setAccessibleLabel(label + ": " + value)
        return row
    }
}
