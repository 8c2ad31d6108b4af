import FlowKit

/// Where a flow names a plugin validator.
package enum ValidatorSite: Sendable, Hashable {
    /// Entry `index` of a field's `validators`.
    case field(id: String, index: Int)
    /// Entry `index` of a step's `rules` (a `plugin` rule).
    case step(id: String, index: Int)
}

/// A plugin validator's description of its rule, to ask for
/// (`FieldValidator.describeRule` or `StepValidator.describeRule`).
package struct RuleDescriptionRequest: Sendable {
    /// What the rule is about.
    package enum Subject: Sendable {
        /// A field validator on this field.
        case field(FieldInfo)
        /// A step validator on this step.
        case step(StepInfo)
    }

    /// Where the flow names the validator.
    package let site: ValidatorSite
    /// The validator's capability name.
    package let validator: String
    /// The field or step, as the plugin sees it in the request's locale.
    package let subject: Subject
    /// The flow's options for the validator, in the request's locale; no
    /// session, no answers (a description is the same for every session).
    package let context: PluginContext
}

/// The descriptions plugin validators gave of their rules, for one version of
/// a flow in one locale: what the step page shows as their hints.
///
/// Why once per flow and locale, not per page: a description depends only
/// on the validator's options and the language (the SDK's contract), yet
/// asking costs a plugin call (another thread, a timeout, the crash guard),
/// and a client that validates as the person types reads the page after each
/// keystroke. So the host asks once, when a page in that locale is first
/// shown, keeps the result with the flow until the flow changes, and hands it
/// to every page; a page never waits for a plugin. Not when the flow loads:
/// locales are open-ended, and loading every flow must not wait on plugins.
package struct RuleDescriptions: Sendable, Hashable {
    /// The ``FlowDefinition/fingerprint`` of the flow the descriptions are
    /// for: after a reload the sites may name other validators, so pages of
    /// another version ignore them.
    package let flowFingerprint: String
    /// The locale they were asked for in.
    package let locale: String
    /// Site → the validator's sentence. Sites without one are absent.
    package let texts: [ValidatorSite: String]

    /// Descriptions of flow version `flowFingerprint` in `locale`.
    package init(flowFingerprint: String, locale: String, texts: [ValidatorSite: String]) {
        self.flowFingerprint = flowFingerprint
        self.locale = locale
        self.texts = texts
    }

    /// No descriptions: pages show the flow's own hints and the built-in ones.
    package static let none = RuleDescriptions(flowFingerprint: "", locale: "", texts: [:])
}

/// Asks plugin validators to describe their rules: the daemon's plugin host,
/// or a test's fake. A thrown error or a timeout means "no description".
package protocol PluginDescribing: Sendable {
    /// `FieldValidator.describeRule` of validator `name`.
    func describeFieldRule(_ name: String, field: FieldInfo, context: PluginContext) async throws -> String?
    /// `StepValidator.describeRule` of validator `name`.
    func describeStepRule(_ name: String, step: StepInfo, context: PluginContext) async throws -> String?
}

extension FlowDefinition {
    /// The descriptions to ask plugins for, for pages in `locale`: one per
    /// plugin validator the flow names without its own `hint`, in document
    /// order.
    ///
    /// - Parameter hostUID: the daemon's own uid, the context's `callerUID`
    ///   (a description belongs to no session, so to no caller).
    package func ruleDescriptionRequests(locale requested: String, hostUID: UInt32) -> [RuleDescriptionRequest] {
        let locale = LocaleFallback.normalize(requested)
        func context(_ options: [String: JSONValue]) -> PluginContext {
            PluginContext(
                flowID: id, sessionID: "", locale: locale, callerUID: hostUID, answers: [:], options: options,
                stateDirectory: "")
        }
        var out: [RuleDescriptionRequest] = []
        for step in steps {
            for field in step.fields {
                for (i, rule) in field.validators.enumerated() where rule.hint == nil {
                    out.append(RuleDescriptionRequest(
                        site: .field(id: field.id, index: i), validator: rule.name,
                        subject: .field(field.info(locale: locale)), context: context(rule.options)))
                }
            }
            for (i, rule) in step.rules.enumerated() where rule.hint == nil {
                guard case .plugin(let plugin) = rule.kind else { continue }
                out.append(RuleDescriptionRequest(
                    site: .step(id: step.id, index: i), validator: plugin.name,
                    subject: .step(step.info(locale: locale)), context: context(plugin.options)))
            }
        }
        return out
    }
}

extension Array where Element == RuleDescriptionRequest {
    /// Runs every request concurrently. A description that is blank, or
    /// whose call threw or timed out, is left out: a description helps the
    /// person, it checks nothing, so there is nothing to fail closed on.
    /// (The host trims and bounds the texts, as it does plugin messages.)
    package nonisolated(nonsending) func describe(
        using describer: some PluginDescribing, flow: FlowDefinition, locale: String
    ) async -> RuleDescriptions {
        let found = await withTaskGroup(of: (ValidatorSite, String?).self) { group in
            for request in self {
                group.addTask {
                    let text: String?
                    switch request.subject {
                    case .field(let info):
                        text = try? await describer.describeFieldRule(request.validator, field: info, context: request.context)
                    case .step(let info):
                        text = try? await describer.describeStepRule(request.validator, step: info, context: request.context)
                    }
                    return (request.site, text ?? nil)
                }
            }
            var texts: [ValidatorSite: String] = [:]
            for await (site, text) in group {
                guard let text, !isBlank(.text(text)) else { continue }
                texts[site] = text
            }
            return texts
        }
        return RuleDescriptions(flowFingerprint: flow.fingerprint, locale: LocaleFallback.normalize(locale), texts: found)
    }
}
