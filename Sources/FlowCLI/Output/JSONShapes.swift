import DBus

/// The `--json` shapes, documented in docs/flowctl.md and flowctl(1). Keys
/// are always present (empty values rather than missing keys) and in a fixed
/// order; new keys may be added, existing ones never change meaning.
public enum JSONShapes {
    /// One flow of `flows`.
    public static func flow(_ flow: FlowSummary) -> JSONOutput {
        .object([
            "id": .string(flow.id), "title": .string(flow.title),
            "titles": .sortedObject(flow.titles.mapValues { .string($0) }),
            "description": .string(flow.description), "locales": .strings(flow.locales),
            "steps": .integer(Int64(flow.steps)), "review": .bool(flow.review),
        ])
    }

    /// One session of `sessions`.
    public static func session(_ session: SessionSummary) -> JSONOutput {
        .object([
            "id": .string(session.id), "flow": .string(session.flow), "state": .string(session.state),
            "path": .string(session.path),
        ])
    }

    /// One plugin of `plugins`.
    public static func plugin(_ plugin: PluginSummary) -> JSONOutput {
        .object([
            "name": .string(plugin.name), "version": .string(plugin.version), "kinds": .strings(plugin.kinds),
            "capabilities": .strings(plugin.capabilities), "path": .string(plugin.path),
            "status": .string(plugin.status), "error": .string(plugin.error),
        ])
    }

    /// A field of a step: the `GetStep` field keys, `value` null when unanswered.
    public static func field(_ field: StepField) -> JSONOutput {
        var pairs: [(String, JSONOutput)] = [
            ("id", .string(field.id)), ("type", .string(field.typeName)), ("label", .string(field.label)),
            ("help", .string(field.help)), ("placeholder", .string(field.placeholder)),
            ("required", .bool(field.required)),
            ("options", .array(field.options.map { .object(["id": .string($0.id), "label": .string($0.label)]) })),
            ("other", .bool(field.other)), ("otherLabel", .string(field.otherLabel)),
            ("value", field.value.map(JSONOutput.init) ?? .null),
            ("otherValue", field.otherText.map { .string($0) } ?? .null),
            ("isSet", .bool(field.isSet)), ("error", .string(field.error)), ("hint", .string(field.hint)),
        ]
        var constraints: [(String, JSONOutput)] = []
        for key in StepField.constraintKeys {
            if let value = field.constraints[key] { constraints.append((key, JSONOutput(value))) }
        }
        pairs.append(("constraints", .object(constraints)))
        return .object(pairs)
    }

    /// A step: the `GetStep` keys.
    public static func step(_ step: StepPage) -> JSONOutput {
        .object([
            "id": .string(step.id), "kind": .string(step.kind), "title": .string(step.title),
            "description": .string(step.description), "body": .string(step.body), "icon": .string(step.icon),
            "error": .string(step.error), "announcement": .string(step.announcement),
            "index": .integer(Int64(step.index)), "count": .integer(Int64(step.count)),
            "continueLabel": .string(step.continueLabel), "backLabel": .string(step.backLabel),
            "canGoBack": .bool(step.canGoBack), "canContinue": .bool(step.canContinue),
            "fields": .array(step.fields.map(field)),
        ])
    }

    /// A review: its groups and note.
    public static func review(_ review: ReviewPage) -> JSONOutput {
        .object([
            "groups": .array(review.groups.map { group in
                .object([
                    "step": .string(group.step), "title": .string(group.title), "finished": .bool(group.finished),
                    "status": .string(group.status), "editLabel": .string(group.editLabel),
                    "answers": .array(group.answers.map { answer in
                        .object(["field": .string(answer.field), "label": .string(answer.label),
                                 "display": .string(answer.display)])
                    }),
                ])
            }),
            "note": .string(review.note),
        ])
    }

    /// `show`: the session's identity and state, the step, and on Review the review.
    public static func show(_ properties: SessionProperties, step: StepPage, review: ReviewPage?) -> JSONOutput {
        var pairs: [(String, JSONOutput)] = [
            ("session", .string(properties.id)), ("flow", .string(properties.flow)),
            ("state", .string(properties.state)), ("locale", .string(properties.locale)),
            ("lastError", .string(properties.lastError)), ("step", self.step(step)),
        ]
        pairs.append(("review", review.map(self.review) ?? .null))
        return .object(pairs)
    }

    /// A watch event, one per line.
    public static func event(_ event: SessionEvent, session: String) -> JSONOutput {
        var pairs: [(String, JSONOutput)] = [("session", .string(session))]
        switch event {
        case .propertiesChanged(let changed, let invalidated):
            pairs += [("event", .string("PropertiesChanged")), ("changed", JSONOutput(changed)),
                      ("invalidated", .strings(invalidated.sorted()))]
        case .stepCompleted(let step, let answers):
            pairs += [("event", .string("StepCompleted")), ("step", .string(step)), ("answers", JSONOutput(answers))]
        case .submitted(let receipt):
            pairs += [("event", .string("Submitted")), ("receipt", JSONOutput(receipt))]
        case .submitFailed(let message):
            pairs += [("event", .string("SubmitFailed")), ("message", .string(message))]
        case .announcement(let text):
            pairs += [("event", .string("Announcement")), ("text", .string(text))]
        case .removed:
            pairs += [("event", .string("SessionRemoved"))]
        }
        return .object(pairs)
    }

    /// An error map (`set`, `continue`): field id → message, sorted.
    public static func errors(_ errors: [String: String]) -> JSONOutput {
        .sortedObject(errors.mapValues { .string($0) })
    }
}
