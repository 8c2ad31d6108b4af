import FlowProtocol

/// How a choice or multiple choice is shown.
package enum ChoiceStyle: Sendable, Equatable {
    /// A boxed list of rows with radio or check buttons: for many or long options.
    case rows
    /// A wrapping line of toggle buttons: for a few short options.
    case chips

    /// At most this many options (Other included) are shown as chips.
    package static let maximumChips = 5
    /// And only when every label is at most this many characters.
    package static let maximumChipLabel = 18

    /// Chips for a few short options, rows otherwise. Options with icons or
    /// help stay readable either way; a long label never becomes a chip.
    package static func of(_ field: StepField) -> ChoiceStyle {
        let labels = field.choices.map(\.label)
        guard !labels.isEmpty, labels.count <= maximumChips else { return .rows }
        return labels.allSatisfy { $0.count <= maximumChipLabel } ? .chips : .rows
    }
}
