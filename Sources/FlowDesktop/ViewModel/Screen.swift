import FlowKit

/// What the window shows.
package enum Screen: Sendable, Hashable {
    case start(StartScreen)
    case step(StepScreen)
    case review(ReviewScreen)
    case submitting(SubmittingScreen)
    case success(SuccessScreen)

    /// What a screen reader is told when this screen arrives.
    package var announcement: String {
        switch self {
        case .start: return ""
        case .step(let s): return s.announcement
        case .review(let r): return r.announcement
        case .submitting(let s): return s.announcement
        case .success(let s): return s.announcement
        }
    }
}

/// What the person did in the window. The controller behind the window (the
/// fixture driver today, the D-Bus client later) turns these into calls.
package enum WindowEvent: Sendable, Hashable {
    case startFlow(String)
    case resume(String)
    case discard(String)
    /// New answers for fields of the current step (`SetAnswers`): a field
    /// cleared is an empty text or list; Other's text is `<field>.other`.
    case answers([String: AnswerValue])
    case continueStep
    case back
    case edit(step: String)
    case cancelSubmit
    /// Escape or the window's close button: the session is kept.
    case close
}
