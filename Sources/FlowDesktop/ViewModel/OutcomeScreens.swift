/// While a submit runs: a spinner and Cancel.
package struct SubmittingScreen: Sendable, Hashable {
    /// "Sending…".
    package var message: String
    package var cancelLabel: String
    package var announcement: String

    package init(message: String, cancelLabel: String, announcement: String) {
        self.message = message
        self.cancelLabel = cancelLabel
        self.announcement = announcement
    }
}

/// After a successful submit: a check, the message and the receipt.
package struct SuccessScreen: Sendable, Hashable {
    /// The complete step's title ("Sent").
    package var title: String
    /// The complete step's body, or empty.
    package var message: String
    /// The receipt, in order (label, value).
    package var receipt: [ReceiptLine]
    /// "Close".
    package var closeLabel: String
    package var announcement: String

    package init(title: String, message: String, receipt: [ReceiptLine], closeLabel: String, announcement: String) {
        self.title = title
        self.message = message
        self.receipt = receipt
        self.closeLabel = closeLabel
        self.announcement = announcement
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
