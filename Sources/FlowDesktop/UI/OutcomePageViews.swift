import Adwaita

/// While a submit runs: a spinner, the message, Cancel.
@MainActor
final class SubmittingPage: Page {
    private let status = StatusPage()
    private let spinner = Spinner()
    private let cancel = Button(mnemonic: "")

    var root: Widget { status }
    var defaultButton: Button? { nil }

    init(_ screen: SubmittingScreen, context: PageContext) {
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
        update(screen)
    }

    func update(_ screen: SubmittingScreen) {
        status.set(iconName: "", title: screen.message, description: "")
        spinner.setAccessibleLabel(screen.message)
        cancel.label = Mnemonics.assign([screen.cancelLabel])[0]
    }

    func focusFirst() { cancel.grabFocus() }
}

/// After a successful submit: a check, the message, the receipt, Close.
@MainActor
final class SuccessPage: Page {
    private let status = StatusPage()
    private let receipt = PreferencesGroup()
    private let close = Button(mnemonic: "")
    private var receiptRows: [ActionRow] = []

    private let scroller: ScrolledWindow
    var root: Widget { scroller }
    var defaultButton: Button? { close }

    init(_ screen: SuccessScreen, context: PageContext) {
        close.addStyleClass("pill")
        close.addStyleClass("suggested-action")
        close.horizontalAlignment = .center
        let box = Box(.vertical, spacing: 24)
        box.append(Clamp(maximumSize: 480, child: receipt))
        box.append(close)
        status.setChild(box)
        scroller = ScrolledWindow(child: status)
        scroller.expandsVertically = true
        close.onClicked { context.send(.close) }
        update(screen)
    }

    func update(_ screen: SuccessScreen) {
        status.set(iconName: "object-select-symbolic", title: screen.title, description: screen.message)
        status.addStyleClass("success-page")
        while let row = receiptRows.popLast() { receipt.remove(row) }
        for line in screen.receipt {
            let row = AnswerRow.make(label: line.label, value: line.value)
            receipt.add(row)
            receiptRows.append(row)
        }
        receipt.isVisible = !screen.receipt.isEmpty
        close.label = Mnemonics.assign([screen.closeLabel])[0]
    }

    func focusFirst() { close.grabFocus() }
}
