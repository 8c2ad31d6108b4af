import DBus
import FlowClient
import FlowEngine
import FlowProtocol

/// The `--json` shapes, documented in docs/flowctl.md and flowctl(1). Keys
/// are always present (empty values rather than missing keys) and in a fixed
/// order; new keys may be added, existing ones never change meaning.
package enum JSONShapes {
    /// One flow of `flows`.
    package static func flow(_ flow: FlowSummary) -> JSONOutput {
        .object([
            "id": .string(flow.id), "title": .string(flow.title),
            "titles": .sortedObject(flow.titles.mapValues { .string($0) }),
            "description": .string(flow.description), "locales": .strings(flow.locales),
            "steps": .integer(Int64(flow.steps)), "review": .bool(flow.review),
        ])
    }

    /// One session of `sessions`.
    package static func session(_ session: SessionListing) -> JSONOutput {
        .object([
            "id": .string(session.id), "flow": .string(session.flowID), "state": .string(session.state.rawValue),
            "path": .string(session.path.rawValue),
        ])
    }

    /// One plugin of `plugins`.
    package static func plugin(_ plugin: PluginSummary) -> JSONOutput {
        .object([
            "name": .string(plugin.name), "version": .string(plugin.version), "kinds": .strings(plugin.kinds),
            "capabilities": .strings(plugin.capabilities), "path": .string(plugin.path),
            "status": .string(plugin.status.rawValue), "error": .string(plugin.error),
        ])
    }

    /// A field of a step: the `GetStep` field keys, `value` null when unanswered.
    package static func field(_ field: StepField) -> JSONOutput {
        var pairs: [(String, JSONOutput)] = [
            ("id", .string(field.id)), ("type", .string(field.type.rawValue)), ("label", .string(field.label)),
            ("help", .string(field.help)), ("placeholder", .string(field.placeholder)),
            ("required", .bool(field.required)),
            ("options", .array(field.options.map { .object(["id": .string($0.id), "label": .string($0.label)]) })),
            ("other", .bool(field.other)), ("otherLabel", .string(field.otherLabel)),
            ("value", field.value.map(JSONOutput.init) ?? .null),
            ("otherValue", field.otherValue.map { .string($0) } ?? .null),
            ("isSet", .bool(field.isSet)), ("error", .string(field.error)), ("hint", .string(field.hint)),
        ]
        pairs.append(("constraints", .object(field.constraints.map { ($0.key, JSONOutput($0.value)) })))
        // Since 1.1: what a person is told before they break a rule.
        pairs += [
            ("warning", .string(field.warning)), ("patternHint", .string(field.patternHint)),
            ("conditionallyRequired", .bool(field.conditionallyRequired)),
            ("ruleHints", ruleHints(field.ruleHints)), ("hints", .strings(field.hintTexts)),
        ]
        return .object(pairs)
    }

    /// Rule hints as objects: where the rule comes from, what it is about, the sentence.
    static func ruleHints(_ hints: [RuleHint]) -> JSONOutput {
        .array(hints.map { .object(["kind": .string($0.kind.rawValue), "subject": .string($0.subject), "text": .string($0.text)]) })
    }

    /// A step: the `GetStep` keys.
    package static func step(_ step: StepPage) -> JSONOutput {
        .object([
            "id": .string(step.id), "kind": .string(step.kind.rawValue), "title": .string(step.title),
            "description": .string(step.description), "body": .string(step.body), "icon": .string(step.icon),
            "error": .string(step.error), "announcement": .string(step.announcement),
            "index": .integer(Int64(step.index)), "count": .integer(Int64(step.count)),
            "continueLabel": .string(step.continueLabel), "backLabel": .string(step.backLabel),
            "canGoBack": .bool(step.canGoBack), "canContinue": .bool(step.canContinue),
            "fields": .array(step.fields.map(field)),
            "warning": .string(step.warning), "progressLabel": .string(step.progressLabel),
            "flowTitle": .string(step.flowTitle), "effectiveLocale": .string(step.effectiveLocale),
            "ruleHints": ruleHints(step.ruleHints),
        ])
    }

    /// A review: its groups and note.
    package static func review(_ review: ReviewPage) -> JSONOutput {
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
    package static func show(_ properties: SessionProperties, step: StepPage, review: ReviewPage?) -> JSONOutput {
        var pairs: [(String, JSONOutput)] = [
            ("session", .string(properties.id)), ("flow", .string(properties.flowID)),
            ("state", .string(properties.state.rawValue)), ("locale", .string(properties.locale)),
            ("lastError", .string(properties.lastError)), ("step", self.step(step)),
        ]
        pairs.append(("review", review.map(self.review) ?? .null))
        return .object(pairs)
    }

    /// A watch event, one per line.
    package static func event(_ event: FlowEvent, session: String) -> JSONOutput {
        var pairs: [(String, JSONOutput)] = [("session", .string(session))]
        switch event {
        case .propertiesChanged(_, let changed):
            let values = Dictionary(uniqueKeysWithValues: changed.map { ($0.key.rawValue, $0.value) })
            pairs += [("event", .string("PropertiesChanged")), ("changed", JSONOutput(values)), ("invalidated", .strings([]))]
        case .session(_, .stepCompleted(let step, let answers)):
            pairs += [("event", .string("StepCompleted")), ("step", .string(step)), ("answers", JSONOutput(answers))]
        case .session(_, .submitted(let receipt)):
            pairs += [("event", .string("Submitted")), ("receipt", JSONOutput(receipt))]
        case .session(_, .submitFailed(let message)):
            pairs += [("event", .string("SubmitFailed")), ("message", .string(message))]
        case .session(_, .announcement(let text)):
            pairs += [("event", .string("Announcement")), ("text", .string(text))]
        case .manager(.sessionRemoved):
            pairs += [("event", .string("SessionRemoved"))]
        case .manager(.sessionNew), .sessionCount, .serviceLost, .reconnected:
            return .null
        }
        return .object(pairs)
    }

    /// An error map (`set`, `continue`): field id → message, sorted.
    package static func errors(_ errors: [String: String]) -> JSONOutput {
        .sortedObject(errors.mapValues { .string($0) })
    }
}
