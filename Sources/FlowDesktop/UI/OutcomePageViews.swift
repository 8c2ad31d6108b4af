import Adwaita
import FlowProtocol

/// While a submit runs: a spinner, the daemon's "Sending…", Cancel.
@MainActor
final class SubmittingPageView: Page {
    private let status = StatusPage()
    private let spinner = Spinner()
    private let cancel = Button(mnemonic: "")

    var root: Widget { status }
    var defaultButton: Button? { nil }

    init(_ page: StepPage, context: PageContext) {
        spinner.setSizeRequest(width: 48, height: 48)
        spinner.horizontalAlignment = .center
        spinner.isSpinning = true
        cancel.addStyleClass("pill")
        cancel.horizontalAlignment = .center
        let box = Box(.vertical, spacing: 24)
        box.append(spinner)
        box.append(cancel)
        status.setChild(box)
        status.expandsVertically = true
        cancel.onClicked { context.send(.cancelSubmit) }
        update(page)
    }

    func update(_ page: StepPage) {
        status.set(iconName: "", title: page.submittingLabel, description: page.flowTitle)
        spinner.setAccessibleLabel(page.submittingLabel)
        cancel.label = Mnemonics.assign([page.cancelLabel])[0]
        cancel.isVisible = !page.cancelLabel.isEmpty
    }

    func focusFirst() { cancel.grabFocus() }
}

/// After a successful submit: a check, the daemon's title and message, the
/// receipt, and Close.
@MainActor
final class SuccessPageView: Page {
    private let status = StatusPage()
    private let receipt = PreferencesGroup()
    private let close = Button(mnemonic: "")
    private var receiptRows: [ActionRow] = []

    private let scroller: ScrolledWindow
    var root: Widget { scroller }
    var defaultButton: Button? { close }

    init(_ page: StepPage, receipt lines: [ReceiptLine], context: PageContext) {
        close.addStyleClass("pill", "suggested-action")
        close.horizontalAlignment = .center
        let box = Box(.vertical, spacing: 24)
        box.append(Clamp(maximumSize: 480, child: receipt))
        box.append(close)
        status.setChild(box)
        scroller = ScrolledWindow(child: status)
        scroller.expandsVertically = true
        close.onClicked { context.send(.close) }
        // "Close" is the app's own: the daemon's page has no button on a settled session.
        close.label = Mnemonics.assign([context.strings(.close)])[0]
        update(page, receipt: lines)
    }

    func update(_ page: StepPage, receipt lines: [ReceiptLine]) {
        status.set(iconName: "object-select-symbolic", title: page.title, description: page.body)
        status.addStyleClass("success-page")
        while let row = receiptRows.popLast() { receipt.remove(row) }
        for line in lines {
            let row = AnswerRow.make(label: line.label, value: line.value)
            receipt.add(row)
            receiptRows.append(row)
        }
        receipt.isVisible = !lines.isEmpty
    }

    func focusFirst() { close.grabFocus() }
}

/// A notice outside any flow: flowd cannot be reached, a session is gone;
/// with a button to try again when there is something to try.
@MainActor
final class NoticePageView: Page {
    private let status = StatusPage()
    private let retry = Button(mnemonic: "")

    var root: Widget { status }
    var defaultButton: Button? { retry.isVisible ? retry : nil }

    init(_ notice: NoticeScreen, context: PageContext) {
        retry.addStyleClass("pill", "suggested-action")
        retry.horizontalAlignment = .center
        status.setChild(retry)
        status.expandsVertically = true
        retry.onClicked { context.send(.retry) }
        update(notice)
    }

    func update(_ notice: NoticeScreen) {
        status.set(iconName: notice.icon, title: notice.title, description: notice.description)
        retry.label = Mnemonics.assign([notice.retryLabel])[0]
        retry.isVisible = !notice.retryLabel.isEmpty
    }

    func focusFirst() { if retry.isVisible { retry.grabFocus() } }
}
