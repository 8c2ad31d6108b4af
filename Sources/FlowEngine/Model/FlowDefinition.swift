import FlowKit
import Synchronization

/// The optional Review page of a flow.
package struct ReviewDefinition: Sendable, Hashable {
    /// Defaults to the localized "Review".
    package let title: LocalizedText?
    /// A footnote about what happens next.
    package let note: LocalizedText?
    /// The Submit button's label; defaults to the localized "Submit".
    package let submitTitle: LocalizedText?
}

/// What happens to a finished flow.
package struct SubmitDefinition: Sendable, Hashable {
    /// The submit action's capability name; nil settles the flow as submitted
    /// without running anything.
    package let action: String?
    /// Handed to the action in `PluginContext.options`.
    package let options: [String: JSONValue]
    /// The action's time limit.
    package let timeoutSeconds: Double
    /// Shown once submitted, unless the receipt carries a `message`.
    package let successMessage: LocalizedText?

    /// The default time limit of a submit action, in seconds.
    package static let defaultTimeoutSeconds = 30.0
}

/// A loaded, linted flow definition (format 1 or 2). See docs/flow-format.md.
///
/// Only ``FlowLoader`` makes one, so every value of this type has passed lint.
/// It is `Codable`: it encodes as the flow document it was loaded from, and
/// decoding runs the loader again (without the capability check).
package struct FlowDefinition: Sendable {
    /// The definition's values, behind one reference: a session holds its
    /// flow, and every copy of a session (the cache's, a change's start, the
    /// presenter's) would otherwise retain each of some twenty references
    /// and carry them inline (docs/performance.md, E1).
    private let storage: Storage

    /// The flow's id, for example `consultation`.
    package var id: String { storage.id }
    /// The flow's name in lists.
    package var title: LocalizedText { storage.title }
    /// A sentence or two for lists.
    package var description: LocalizedText? { storage.description }
    /// The steps in document order (branching only goes forward).
    package var steps: [StepDefinition] { storage.steps }
    /// The Review page, when the flow has one.
    package var review: ReviewDefinition? { storage.review }
    /// What happens on Submit; nil settles without an action.
    package var submit: SubmitDefinition? { storage.submit }
    /// The label of the last Continue of a flow without Review; defaults to
    /// the localized "Finish".
    package var finishTitle: LocalizedText? { storage.finishTitle }
    /// The locales the flow is written for: the file's `locales`, or else
    /// every locale its strings are translated into (`en` when none).
    package var locales: [String] { storage.locales }
    /// A hash of the document's content (16 hex digits); a session records it
    /// so a restore can tell that the flow changed since.
    package var fingerprint: String { storage.fingerprint }
    /// The file's `format`: 1, or 2 for a flow that may use field
    /// conditions, piping, computed values and warnings.
    package var format: Int { storage.format }
    /// The polkit action a caller needs to start a session of this flow on
    /// the system bus (root and the per-user flowd need none); nil when
    /// anyone may.
    package var authorization: AuthorizationAction? { storage.authorization }
    /// The type of each computed field's value, as the linter worked it out.
    var computedTypes: [String: ExprType] { storage.computedTypes }
    /// Some field has a `visibleIf` or is computed: working out the path
    /// also works out which fields are shown and what they compute.
    var hasFieldLogic: Bool { storage.hasFieldLogic }
    /// The resolution of every session when no answer can change it (no
    /// field logic, no `next` rules).
    var fixedResolution: Resolution? { storage.fixedResolution }
    /// Some piped text (format 2) has a placeholder or an escaped brace, so
    /// the session's words fill them from the answers.
    var pipes: Bool { storage.pipes }
    /// An answer can change nothing of the session's progress but its own
    /// step's checks (``answersStayOnTheirStep(steps:hasFieldLogic:pipes:)``):
    /// the daemon then works out no path after `SetAnswers`.
    package var answersStayOnTheirStep: Bool { storage.answersStayOnTheirStep }

    var source: JSONNode { storage.source }
    var stepIndex: [String: Int] { storage.stepIndex }
    /// Field id → (step index, field index).
    var fieldLocation: [String: FieldLocation] { storage.fieldLocation }
    /// The texts that depend on the locale asked for only, per locale
    /// (``localized(_:)``). A reloaded flow is a new definition with an
    /// empty cache, so nothing in it outlives the flow it was made from.
    var localizedTexts: LocalizedFlowCache { storage.localizedTexts }
    /// The parts of each step page that depend only on the step and the
    /// locale (``FlowSession/currentStep()``); new with each definition,
    /// like ``localizedTexts``.
    var pageTexts: PerLocaleCache<PageTexts> { storage.pageTexts }

    struct FieldLocation: Sendable, Hashable {
        var step: Int
        var field: Int
    }

    /// The values of a definition, never changed once made.
    private final class Storage: Sendable {
        let id: String
        let title: LocalizedText
        let description: LocalizedText?
        let steps: [StepDefinition]
        let review: ReviewDefinition?
        let submit: SubmitDefinition?
        let finishTitle: LocalizedText?
        let locales: [String]
        let fingerprint: String
        let format: Int
        let authorization: AuthorizationAction?
        let computedTypes: [String: ExprType]
        let hasFieldLogic: Bool
        /// `review != nil`, kept: reading `review` copies the definition out
        /// (some 200 instructions), and every progress line asks.
        let hasReview: Bool
        /// The resolution of every session of a flow without field logic
        /// or `next` rules (``FlowSession/resolve(including:)``): every step
        /// in order, nothing hidden or computed, whatever the answers. Made
        /// once: a move, a check and a page each made its two arrays again
        /// (some 860 instructions, three times a `Continue`).
        let fixedResolution: Resolution?
        let pipes: Bool
        let answersStayOnTheirStep: Bool
        let source: JSONNode
        let stepIndex: [String: Int]
        let fieldLocation: [String: FieldLocation]
        let localizedTexts: LocalizedFlowCache
        let pageTexts: PerLocaleCache<PageTexts>

        init(
            id: String, title: LocalizedText, description: LocalizedText?, steps: [StepDefinition],
            review: ReviewDefinition?, submit: SubmitDefinition?, finishTitle: LocalizedText?, locales: [String],
            source: JSONNode, format: Int, computedTypes: [String: ExprType], pipes: Bool,
            authorization: AuthorizationAction?
        ) {
            self.authorization = authorization
            self.format = format
            self.pipes = pipes
            self.computedTypes = computedTypes
            let hasFieldLogic = steps.contains { $0.fields.contains { $0.visibleIf != nil || $0.type == .computed } }
            self.hasFieldLogic = hasFieldLogic
            self.fixedResolution = hasFieldLogic || steps.contains(where: { !$0.next.isEmpty })
                ? nil
                : Resolution(
                    route: Array(steps.indices), onPath: Array(repeating: true, count: steps.count), hidden: [],
                    computed: [:])
            self.answersStayOnTheirStep = FlowDefinition.answersStayOnTheirStep(
                steps: steps, hasFieldLogic: hasFieldLogic, pipes: pipes)
            self.id = id
            self.title = title
            self.description = description
            self.steps = steps
            self.review = review
            self.hasReview = review != nil
            self.submit = submit
            self.finishTitle = finishTitle
            self.locales = locales
            self.source = source
            self.fingerprint = source.fingerprint
            var stepIndex: [String: Int] = [:]
            var fieldLocation: [String: FieldLocation] = [:]
            for (s, step) in steps.enumerated() {
                stepIndex[step.id] = s
                for (f, field) in step.fields.enumerated() {
                    fieldLocation[field.id] = FieldLocation(step: s, field: f)
                }
            }
            self.stepIndex = stepIndex
            self.fieldLocation = fieldLocation
            self.localizedTexts = LocalizedFlowCache()
            self.pageTexts = PerLocaleCache()
        }
    }

    init(
        id: String, title: LocalizedText, description: LocalizedText?, steps: [StepDefinition],
        review: ReviewDefinition?, submit: SubmitDefinition?, finishTitle: LocalizedText?, locales: [String],
        source: JSONNode, format: Int = 1, computedTypes: [String: ExprType] = [:], pipes: Bool = false,
        authorization: AuthorizationAction? = nil
    ) {
        storage = Storage(
            id: id, title: title, description: description, steps: steps, review: review, submit: submit,
            finishTitle: finishTitle, locales: locales, source: source, format: format, computedTypes: computedTypes,
            pipes: pipes, authorization: authorization)
    }

    /// Whether an answer to a field of step `i` can change nothing but step
    /// `i`'s own checks, whatever `i`: the path is every step in order
    /// (no field logic, no `next` rules), no text pipes answers (titles),
    /// no step rule reads a field of another step, an expression or the
    /// date, no field's date bound is `today` (which moves by itself) and
    /// no plugin checks a step (its verdict is kept for one revision of
    /// the answers, so any new answer drops it). A change of answers on the
    /// current step then leaves the other steps finished or not, the
    /// position, the path's titles and the shown fields as they were.
    private static func answersStayOnTheirStep(steps: [StepDefinition], hasFieldLogic: Bool, pipes: Bool) -> Bool {
        guard !hasFieldLogic, !pipes, steps.allSatisfy({ $0.next.isEmpty }) else { return false }
        for step in steps {
            let own = Set(step.fields.map(\.id))
            if step.fields.contains(where: { $0.after == .today || $0.before == .today }) { return false }
            for rule in step.rules {
                let read: [String]
                switch rule.kind {
                case .equals(let a, let b), .notEquals(let a, let b), .before(let a, let b), .after(let a, let b):
                    read = [a, b]
                case .requiredIf(let field, let condition):
                    guard !condition.readsExpression else { return false }
                    read = [field] + condition.fieldIDs
                case .plugin:
                    return false
                }
                // `<field>.other` is the field's own.
                guard read.allSatisfy({ own.contains($0.hasSuffix(".other") ? String($0.dropLast(6)) : $0) }) else {
                    return false
                }
            }
        }
        return true
    }

    /// The step with this id.
    package func step(_ id: String) -> StepDefinition? {
        stepIndex[id].map { steps[$0] }
    }

    /// The field with this id, on whatever step it is.
    package func field(_ id: String) -> FieldDefinition? {
        fieldLocation[id].map { steps[$0.step].fields[$0.field] }
    }

    /// The id of the step that holds a field.
    package func stepID(ofField id: String) -> String? {
        fieldLocation[id].map { steps[$0.step].id }
    }

    /// Whether the flow has a Review page.
    package var hasReview: Bool { storage.hasReview }

    /// The plugin calls a new session needs before it starts: options
    /// providers and prefill providers, in document order, with the field as
    /// the plugin sees it in `locale`.
    package func providerRequests(locale: String) -> [ProviderRequest] {
        var out: [ProviderRequest] = []
        for step in steps {
            for field in step.fields {
                if let p = field.optionsFrom {
                    out.append(ProviderRequest(kind: .options, provider: p, field: field.info(locale: locale)))
                }
                if let p = field.prefill {
                    out.append(ProviderRequest(kind: .prefill, provider: p, field: field.info(locale: locale)))
                }
            }
        }
        return out
    }

}

/// What lists show of a flow, in one locale (`ListFlows`).
package struct LocalizedFlowSummary: Sendable, Hashable {
    /// The flow's id.
    package let id: String
    /// The title in ``locale``.
    package let title: String
    /// The description in ``locale``, or empty.
    package let description: String
    /// The flow locale the texts resolved to: one of the flow's `locales`.
    package let locale: String
}

extension FlowDefinition {
    /// The flow locale a request resolves to: the best of ``locales`` along
    /// the fallback chain (``LocaleFallback``), so `ar` on a flow written in
    /// `en` and `de` is `en`, and `pt-PT` on one with `pt-BR` is `pt-BR`.
    ///
    /// This is the language the flow's own texts are shown in. flowd's
    /// built-in strings follow the same chain over their ten locales
    /// (``Strings/catalogLocale(for:)``), so the two agree unless the flow is
    /// written in a language flowd has no strings for (a flow in `sv` shows
    /// English buttons).
    package func effectiveLocale(for requested: String) -> String {
        localized(requested).effectiveLocale
    }

    /// The title and description in `requested` (nil: the flow's first
    /// locale), along the fallback chain.
    package func summary(locale requested: String?) -> LocalizedFlowSummary {
        guard let requested else { return summary(locale: nil, effectiveLocale: locales.first ?? "en") }
        return localized(requested).summary
    }

    private func summary(locale requested: String?, effectiveLocale locale: String) -> LocalizedFlowSummary {
        LocalizedFlowSummary(
            id: id, title: title.resolve(requested ?? locale), description: description?.resolve(requested ?? locale) ?? "",
            locale: locale)
    }

    /// The flow's texts in `requested` that depend on nothing else, worked
    /// out on first use and kept for the next call (every `GetStep` and
    /// property snapshot reads them; resolving each along the fallback chain
    /// was a tenth of a call).
    func localized(_ requested: String) -> LocalizedFlowTexts {
        localizedTexts.texts(for: requested) {
            let effective: String
            if let i = LocaleFallback.bestMatch(for: LocaleFallback.normalize(requested), in: locales) {
                effective = locales[i]
            } else {
                effective = "en"
            }
            return LocalizedFlowTexts(
                effectiveLocale: effective, summary: summary(locale: requested, effectiveLocale: effective),
                stepTitles: steps.map { $0.title.resolve(requested) },
                options: Dictionary(uniqueKeysWithValues: steps.flatMap(\.fields).filter { !$0.options.isEmpty }.map { field in
                    (field.id, field.options.map { ChoiceOption(id: $0.id, label: $0.label.resolve(requested), icon: $0.icon) })
                }))
        }
    }
}

/// A flow's texts in one requested locale that depend on nothing else
/// (``FlowDefinition/localized(_:)``).
struct LocalizedFlowTexts: Sendable {
    /// ``FlowDefinition/effectiveLocale(for:)``.
    let effectiveLocale: String
    /// ``FlowDefinition/summary(locale:)``.
    let summary: LocalizedFlowSummary
    /// Each step's title resolved in the locale, by step index: the template
    /// answers are piped into (``SessionText/piped(_:)``).
    let stepTitles: [String]
    /// The options of each field that has options in the flow, labels
    /// resolved in the locale, by field id.
    let options: [String: [ChoiceOption]]
}

/// The per-locale texts of one flow definition.
typealias LocalizedFlowCache = PerLocaleCache<LocalizedFlowTexts>

/// Values of one flow definition worked out per locale asked for, kept for
/// the next call. Bounded: the locale is the caller's, so past
/// ``capacity`` locales nothing more is kept.
///
/// A class behind a lock because the definition is a value shared by every
/// session of the flow and read from any thread; a value is made outside
/// the lock (two callers may both make it; they make the same value).
final class PerLocaleCache<Value: Sendable>: Sendable {
    /// The most locales kept per flow.
    static var capacity: Int { 32 }

    private struct Entries {
        var byLocale: [String: Value] = [:]
        /// The entry found last: most calls ask for the locale the call
        /// before asked for, and a locale is a short string, compared
        /// without hashing (a look-up in ``byLocale`` hashed it, some 600
        /// instructions per page, snapshot and move).
        var recent: (locale: String, value: Value)?

        mutating func find(_ locale: String) -> Value? {
            if let recent, recent.locale == locale { return recent.value }
            guard let value = byLocale[locale] else { return nil }
            recent = (locale, value)
            return value
        }
    }

    private let entries = Mutex(Entries())

    init() {}

    /// The value for `locale`, made by `make` when not kept yet (and made
    /// on each use once the cache is full).
    func texts(for locale: String, make: () -> Value) -> Value {
        if let kept = entries.withLock({ $0.find(locale) }) { return kept }
        let made = make()
        entries.withLock { entries in
            if entries.byLocale.count < Self.capacity { entries.byLocale[locale] = made }
        }
        return made
    }

    /// The value for `locale`, made by `make` when not kept yet; nil when
    /// it is not kept and the cache is full (for a caller with a way of its
    /// own that is cheaper than making a value for one use).
    func kept(for locale: String, make: () -> Value) -> Value? {
        if let kept = entries.withLock({ $0.find(locale) }) { return kept }
        guard entries.withLock({ $0.byLocale.count < Self.capacity }) else { return nil }
        let made = make()
        entries.withLock { entries in
            if entries.byLocale.count < Self.capacity { entries.byLocale[locale] = made }
        }
        return made
    }

    /// How many locales are kept (for tests).
    var count: Int { entries.withLock { $0.byLocale.count } }
}

/// A plugin call a session needs when it starts (see
/// ``FlowDefinition/providerRequests(locale:)``).
package struct ProviderRequest: Sendable {
    /// Which kind of provider to call.
    package enum Kind: Sendable, Hashable {
        /// Call an `OptionsProvider`, then ``FlowSession/setDynamicOptions(field:_:)``.
        case options
        /// Call a `PrefillProvider`, and pass the value in the session's `prefill`.
        case prefill
    }

    /// Options or prefill.
    package let kind: Kind
    /// The plugin and the options to pass in `PluginContext.options`.
    package let provider: ProviderReference
    /// The field the call is for, as the plugin sees it.
    package let field: FieldInfo
}

extension FlowDefinition: Codable {
    /// Encodes the flow document this definition was loaded from.
    package func encode(to encoder: any Encoder) throws {
        try source.encode(to: encoder)
    }

    /// Reads a flow document and lints it with ``FlowLoadLimits/default`` and
    /// no capability check; lint problems become a `DecodingError`.
    package init(from decoder: any Decoder) throws {
        let limits = FlowLoadLimits.default
        let node = try JSONNode.decode(from: decoder, maxDepth: limits.maxDepth)
        do {
            self = try FlowLoader.build(
                node, sink: LintSink(file: "<decoded>", maxProblems: limits.maxProblems), capabilities: .any, limits: limits)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }
}
