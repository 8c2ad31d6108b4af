import FlowKit

// After a restore or a reload: drop what no longer fits the flow, and put
// the session somewhere that still makes sense.
extension FlowSession {
    /// Makes a restored record fit the flow as loaded now (see
    /// ``init(restoring:flow:clock:)``).
    mutating func repairAfterRestore() {
        var touchedSteps: Set<String> = []
        // Answers that no longer fit the flow. Dropping one changes what a
        // submit would send: a new revision, so a new idempotency key.
        for (key, value) in record.answers {
            guard let target = answerTarget(key), target.field.type != .secure,
                (try? checkShape(value, field: target.field, isOther: target.isOther)) != nil
            else {
                record.answers[key] = nil
                record.revision &+= 1
                if let s = answerTarget(key).flatMap({ flow.stepID(ofField: $0.field.id) }) { touchedSteps.insert(s) }
                continue
            }
        }
        for key in record.dynamicOptions.keys where flow.field(key)?.optionsFrom == nil {
            record.dynamicOptions[key] = nil
        }
        // Secure values that did not survive (all of them after a restart):
        // their steps must be filled in again.
        if record.state != .submitted {
            for id in record.secureFieldsSet where scratch.secure[id] == nil {
                if let s = flow.stepID(ofField: id) { touchedSteps.insert(s) }
            }
            record.secureFieldsSet = record.secureFieldsSet.filter { scratch.secure[$0] != nil }
        }
        record.visited = record.visited.filter { flow.stepIndex[$0] != nil }
        record.completed = record.completed.filter { flow.stepIndex[$0] != nil && !touchedSteps.contains($0) }
        record.shownErrors = record.shownErrors.filter { flow.field($0) != nil }
        record.stepMessages = record.stepMessages.filter { flow.stepIndex[$0.key] != nil }
        record.flowFingerprint = flow.fingerprint

        // The position must still make sense.
        let r = resolve()
        let p = r.route
        let isFinished = finishedSteps(r)
        let position = record.currentStep
        let valid: Bool
        switch position {
        case Self.completeID: valid = record.state == .submitted
        case Self.reviewID: valid = flow.hasReview && record.state != .submitted
        default: valid = record.state != .submitted && flow.stepIndex[position].map(p.contains) == true
        }
        if record.state == .submitted {
            record.currentStep = Self.completeID
        } else if !valid {
            let target = p.first(where: { !isFinished($0) }) ?? p.last ?? 0
            let step = flow.steps[target]
            record.currentStep = step.id
            if !record.visited.contains(step.id) { record.visited.append(step.id) }
            announce(arrival(atStep: target, path: p))
        }
        switch record.state {
        case .editing, .review:
            record.state = record.currentStep == Self.reviewID ? .review : .editing
        case .submitting, .submitted, .failed:
            break
        }
    }

    /// Like `checkValue`, without the option check (options may have changed).
    private func checkShape(_ value: AnswerValue, field: FieldDefinition, isOther: Bool) throws(SessionError) {
        if isOther {
            guard case .text = value else { throw SessionError(.invalidArgs, "shape") }
            return
        }
        let ok: Bool
        switch (field.type, value) {
        case (.text, .text), (.multiline, .text), (.email, .text), (.date, .text), (.time, .text), (.choice, .text):
            ok = true
        case (.multichoice, .list), (.toggle, .bool), (.number, .integer), (.number, .number):
            ok = true
        default:
            ok = false
        }
        if !ok { throw SessionError(.invalidArgs, "shape") }
    }
}
