import DBus
import FlowEngine

/// The Review page: the `GetReview` reply `(aa{sv} groups, s note)`.
package struct ReviewPage: Sendable, Hashable {
    /// One group per form step on the path.
    package var groups: [ReviewSection]
    /// The flow's footnote, or empty.
    package var note: String

    /// A review of `groups` with `note`.
    package init(groups: [ReviewSection], note: String) {
        self.groups = groups
        self.note = note
    }

    /// The group of step `step`.
    package func group(_ step: String) -> ReviewSection? { groups.first { $0.step == step } }

    /// The daemon's side: the page for the engine's view of Review.
    package init(_ view: ReviewView) {
        self.init(
            groups: view.groups.map { group in
                ReviewSection(
                    step: group.step, title: group.title, finished: group.finished, status: group.status,
                    editLabel: group.editLabel,
                    answers: group.answers.map { ReviewLine(field: $0.field, label: $0.label, display: $0.display) })
            },
            note: view.note)
    }

    /// The encoder: the reply's two arguments.
    package var dbusArguments: [DBusValue] {
        [.array(elementType: "a{sv}", groups.map(\.dbusValue)), .string(note)]
    }

    /// The decoder of the reply's arguments.
    package init(dbusArguments arguments: [DBusValue]) throws(WireError) {
        guard arguments.count == 2, case .array(let type, let items) = arguments[0], type == "a{sv}",
              case .string(let note) = arguments[1] else {
            let signature = arguments.map(\.signature.rawValue).joined()
            throw WireError("the GetReview reply has the signature '\(signature)', expected 'aa{sv}s'")
        }
        var groups: [ReviewSection] = []
        for (index, item) in items.enumerated() {
            groups.append(try ReviewSection(dbusValue: item, place: "group \(index + 1) of the GetReview reply"))
        }
        self.init(groups: groups, note: note)
    }
}

/// One step on Review.
package struct ReviewSection: Sendable, Hashable {
    /// The step id: Edit is `GoTo(step)`.
    package var step: String
    /// The step title.
    package var title: String
    /// Continue accepted the step's answers, and they still pass.
    package var finished: Bool
    /// Empty, or the localized "Not finished".
    package var status: String
    /// "Edit Day and time": the accessible label of Edit.
    package var editLabel: String
    /// The answers, in field order.
    package var answers: [ReviewLine]

    /// A review group.
    package init(step: String, title: String, finished: Bool, status: String, editLabel: String, answers: [ReviewLine]) {
        self.step = step
        self.title = title
        self.finished = finished
        self.status = status
        self.editLabel = editLabel
        self.answers = answers
    }

    /// The display value of `field`.
    package func display(_ field: String) -> String? { answers.first { $0.field == field }?.display }

    /// The encoder: one `a{sv}` of `groups`.
    package var dbusValue: DBusValue {
        .vardict([
            "step": .string(step), "title": .string(title), "finished": .bool(finished), "status": .string(status),
            "editLabel": .string(editLabel),
            "answers": .array(
                elementType: "(sss)",
                answers.map { .structure([.string($0.field), .string($0.label), .string($0.display)]) }),
        ])
    }

    /// The decoder of one `a{sv}` of `groups`.
    package init(dbusValue: DBusValue, place: String = "a GetReview group") throws(WireError) {
        let d = try WireDictionary(dbusValue, place)
        self.init(
            step: try d.required("step"), title: try d.required("title"), finished: try d.required("finished"),
            status: try d.required("status"), editLabel: try d.required("editLabel"),
            answers: try d.required("answers", [DBusStruct<String, String, String>].self).map { answer in
                let (field, label, display) = answer.fields
                return ReviewLine(field: field, label: label, display: display)
            })
    }
}

/// One answer on Review.
package struct ReviewLine: Sendable, Hashable {
    /// The field id.
    package var field: String
    /// The label.
    package var label: String
    /// The value as shown: option labels, yes/no, a mask, or "Not given".
    package var display: String

    /// A review answer.
    package init(field: String, label: String, display: String) {
        self.field = field
        self.label = label
        self.display = display
    }
}
