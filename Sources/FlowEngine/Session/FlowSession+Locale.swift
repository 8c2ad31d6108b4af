import FlowKit

/// What a change of language asks of the host: the texts plugins said in the
/// old language, to ask for again in the new one.
package struct LocaleChange: Sendable {
    /// Field validators of the current step whose messages were in the old
    /// language: run them and pass the results to
    /// ``FlowSession/applyPluginResults(_:)``.
    package let checks: [PluginCheck]
    /// Options providers whose labels were in the old language: call each
    /// in the new one and pass its options to
    /// ``FlowSession/setDynamicOptions(field:_:)``. Empty once settled.
    package let providers: [ProviderRequest]

    /// Nothing to ask again.
    static let none = LocaleChange(checks: [], providers: [])
}

// The session's language: the one asked for, the one its texts resolve to,
// and changing it (people switch language halfway through).
extension FlowSession {
    /// The locale the session was started with or last set to, normalized
    /// (`de_DE.UTF-8` is `de-DE`): what plugins get as `PluginContext.locale`.
    package var requestedLocale: String { record.locale }

    /// The flow locale the session's texts resolve to
    /// (``FlowDefinition/effectiveLocale(for:)``): `ar` on a flow written in
    /// English is `en`.
    package var effectiveLocale: String { flow.effectiveLocale(for: record.locale) }

    /// Changes the session's language.
    ///
    /// Kept in the record, so it outlives a restart. What the session said in
    /// flowd's or the flow's own words (the last announcement, the last
    /// submit error) is said again in the new language, without a new
    /// announcement; what plugins said cannot be reworded here, so plugin
    /// step messages are dropped (the next Continue asks again) and the
    /// returned ``LocaleChange`` lists the calls to make now. Answers,
    /// position and state do not change; it works in every state.
    ///
    /// - Throws: `invalidArgs` for a tag that is not a locale (BCP 47).
    package mutating func setLocale(_ tag: String, now: Int64) throws(SessionError) -> LocaleChange {
        guard let normalized = LocaleFallback.requested(tag) else {
            throw SessionError(.invalidArgs, "\(quoted(tag)) is not a locale tag (expected one like \"en\" or \"pt-BR\")")
        }
        guard normalized != record.locale else { return .none }
        let before = words
        record.locale = normalized
        record.updatedAt = now
        reword(from: before)
        guard isMutable else { return .none }
        record.stepMessages = [:]
        scratch.clearVerdicts()
        var checks: [PluginCheck] = []
        if let i = flow.stepIndex[record.currentStep] {
            let r = resolve(including: i)
            checks = flow.steps[i].fields.flatMap { fieldChecks($0, retryFailures: true, in: r) }
        }
        return LocaleChange(
            checks: checks, providers: flow.providerRequests(locale: normalized).filter { $0.kind == .options })
    }

    /// Says the kept texts again in the session's (new) locale when they were
    /// flowd's or the flow's words in `old`; a plugin's text stays as it was.
    private mutating func reword(from old: SessionText) {
        let failures: [SessionMessage] = [
            .builtin(.submitFailed), .builtin(.submitTimeout), .builtin(.submitInterrupted),
        ]
        if let error = record.lastError, let message = failures.first(where: { old($0) == error }) {
            record.lastError = words(message)
        }
        var said = failures + [.builtin(.submitting), .builtin(.notSent), successMessage ?? .builtin(.submitted)]
        let p = route()
        let (index, count) = progress(p)
        said.append(.builtin(.stepAnnouncement, [
            "n": .verbatim(String(index)), "m": .verbatim(String(count)), "title": reviewTitle,
        ]))
        if let i = flow.stepIndex[record.currentStep] { said.append(arrival(atStep: i, path: p)) }
        if let message = said.first(where: { old($0) == record.announcement }) {
            record.announcement = words(message)
        }
    }
}
