import FlowProtocol

/// Which fields of the current step the person has touched, and so which
/// errors are shown: an error appears under a field only once the person
/// has worked on it, never on a fresh step.
package struct TouchedFields: Sendable, Equatable {
    private(set) var ids: Set<String> = []

    package init() {}

    /// The person edited (or chose in) the field.
    package mutating func touch(_ id: String) { ids.insert(id) }

    package func isTouched(_ id: String) -> Bool { ids.contains(id) }

    /// The error to show under `field` now: its error once touched, else nothing.
    package func visibleError(for field: StepField) -> String {
        isTouched(field.id) ? field.error : ""
    }
}
