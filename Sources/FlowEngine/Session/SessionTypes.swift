import FlowKit

/// Field id → localized message. A step-level message that belongs to no
/// field has the key `""`. Only fields with an error appear.
package typealias FieldErrors = [String: String]

/// Where a session is in its life: `editing → review → submitting → submitted | failed`.
package enum SessionState: String, Sendable, Hashable, Codable, CaseIterable {
    /// On a step.
    case editing
    /// On Review.
    case review
    /// The submit action is running.
    case submitting
    /// Settled: the answers can no longer change.
    case submitted
    /// The last submit failed; `lastError` says why. Submit may be retried.
    case failed
}

/// Why a session call was refused. The daemon maps ``Kind`` to one of the
/// contract's error names (FlowProtocol's `FlowErrorName`); the message is
/// English, for programs and logs.
package struct SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error's class; its raw value is the D-Bus error name's last part.
    package enum Kind: String, Sendable, Hashable {
        /// A wrong value type, a field not on the current step, an unknown option id.
        case invalidArgs = "InvalidArgs"
        /// Not possible in this state: Back on the first step, GoTo a step not
        /// visited, changing a settled session.
        case invalidState = "InvalidState"
        /// An unknown step id.
        case notFound = "NotFound"
        /// A step is not finished.
        case validationFailed = "ValidationFailed"
        /// A list over its bound (dynamic options).
        case limitExceeded = "LimitExceeded"
        /// A stored record this engine cannot restore (a newer format, another flow).
        case incompatibleRecord = "IncompatibleRecord"
    }

    /// The error's class.
    package let kind: Kind
    /// A human message in English.
    package let message: String

    /// An error of `kind` saying `message`.
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// `Kind: message`.
    package var description: String { "\(kind.rawValue): \(message)" }
}

/// The answers of one step that Continue accepted, for the `StepCompleted`
/// signal. Secure fields are left out.
package struct StepCompletion: Sendable, Hashable {
    /// The step's id.
    package let step: String
    /// The step's answers, secure fields left out.
    package let answers: [String: AnswerValue]
}

/// What `setAnswers` did.
package struct SetAnswersResult: Sendable {
    /// The current step's field errors as of now.
    package let errors: FieldErrors
    /// Plugin field validators to run for the values just set. When empty,
    /// `errors` is final; otherwise run them and pass the results to
    /// ``FlowSession/applyPluginResults(_:)``, which returns the final errors.
    package let checks: [PluginCheck]
    /// ``FlowSession/canContinue`` of the session as `setAnswers` left it,
    /// from the checks that found `errors` (a host that shows it need not
    /// run them again).
    package let canContinue: Bool
}

/// What `checkAnswers` found: what `setAnswers` would have replied, with
/// nothing stored.
package struct AnswerCheck: Sendable {
    /// The current step's field errors, as `setAnswers` would return them.
    package let errors: FieldErrors
    /// The plugin field validators `setAnswers` would ask for. When empty,
    /// `errors` is final; otherwise run them and pass the results to
    /// ``errors(applying:)``.
    package let checks: [PluginCheck]
    /// The session as `setAnswers` would have left it: only here, never
    /// stored, so the results of `checks` can be applied to the same values.
    let trial: FlowSession

    /// The final errors once `checks` ran: what
    /// ``FlowSession/applyPluginResults(_:)`` would return after the same
    /// `setAnswers`.
    package func errors(applying results: [PluginCheckResult]) -> FieldErrors {
        var session = trial
        return session.applyPluginResults(results)
    }
}

/// What a `continueStep` call did.
package enum ContinueOutcome: Sendable {
    /// The step was accepted and the session moved on (to a step or to Review).
    case moved(StepCompletion)
    /// The session stayed; these are the errors.
    case stayed(FieldErrors)
    /// The built-in rules pass, but plugin results are missing: run these
    /// checks, pass the results to ``FlowSession/applyPluginResults(_:)``,
    /// and call `continueStep` again. That second call treats a check that is
    /// still missing as failed, so it never returns `checking` again.
    case checking([PluginCheck])
    /// This Continue was the flow's last (the last step of a flow without
    /// Review, or Continue on Review) and began the submit, exactly as
    /// ``FlowSession/beginSubmit(now:)`` does. The completion is nil on Review.
    case submit(StepCompletion?, SubmitStart)
    /// Nothing to do: the session is settled or a submit is running.
    case noChange
}

/// What `beginSubmit` did.
package enum SubmitStart: Sendable {
    /// A step on the path is not finished: the session moved there (the daemon
    /// answers `ValidationFailed`).
    case redirected(toStep: String)
    /// The flow has no submit action: the session is now submitted.
    case settledWithoutAction
    /// Run the action, then call `finishSubmit`, `failSubmit` or `cancelSubmit`.
    case run(SubmitRequest)
    /// The session was already submitted: nothing happened (success).
    case alreadySubmitted
}

/// Everything the daemon needs to run a submit action.
package struct SubmitRequest: Sendable {
    /// The submit action's capability name.
    package let action: String
    /// The flow's `submit.options`.
    package let options: [String: JSONValue]
    /// The action's time limit.
    package let timeoutSeconds: Double
    /// The answers on the path, secure ones apart. Its `id` is the session id,
    /// so a retry carries the same id.
    package let submission: Submission
    /// The context for the call; the host fills in `stateDirectory`.
    package let context: PluginContext
}

/// How a submit action failed.
package enum SubmitFailure: Sendable, Hashable {
    /// The action threw `LocalizedFailure`: this text is shown as it is.
    case localized(String)
    /// Any other error: the localized "Couldn't send this. Try again."
    case other
    /// The action ran past `timeoutSeconds`.
    case timedOut
}
