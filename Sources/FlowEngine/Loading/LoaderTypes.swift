import FlowKit

/// The bounds on what the loader accepts. A file over any of them is refused
/// with a precise error; nothing in it can make the loader use unbounded time,
/// memory or stack. The defaults are documented in docs/flow-format.md.
package struct FlowLoadLimits: Sendable, Hashable {
    /// The largest file, in bytes.
    package var maxFileBytes = 1 << 20
    /// The deepest nesting of arrays and objects (the parser's recursion is
    /// bounded by this, and it is clamped to 256).
    package var maxDepth = 32
    /// The longest string of any kind, in UTF-8 bytes.
    package var maxStringBytes = 16 * 1024
    /// The longest step, field or option id, in bytes.
    package var maxIDLength = 64
    /// The most steps in a flow.
    package var maxSteps = 200
    /// The most fields on one step.
    package var maxFieldsPerStep = 50
    /// The most fields in the whole flow.
    package var maxFields = 1000
    /// The most options of one field (also for `optionsFrom` results).
    package var maxOptionsPerField = 500
    /// The most `rules` on a step, and the most `next` rules.
    package var maxRulesPerStep = 50
    /// The most plugin validators on one field.
    package var maxValidatorsPerField = 8
    /// The most translations of one string.
    package var maxTranslations = 64
    /// The most members of an `all`, `any` or `in` list.
    package var maxConditionItems = 100
    /// The longest submit time limit, in seconds.
    package var maxTimeoutSeconds = 3600.0
    /// Bounds on `pattern`.
    package var pattern = PatternLimits.default
    /// Bounds on expressions (format 2).
    package var expression = ExpressionLimits.default
    /// How many problems a failed load reports before it stops listing them.
    package var maxProblems = 50

    /// The default bounds; change single members as needed.
    package init() {}

    /// The bounds documented in docs/flow-format.md.
    package static let `default` = FlowLoadLimits()
}

/// The plugin capabilities that are available when a flow is loaded, and the
/// options those that declare them take.
///
/// The linter refuses a flow that names a capability nobody provides, or gives
/// one options that do not fit its declaration. With ``any`` both checks are
/// skipped (for `flowctl check` without a daemon).
package struct CapabilityCatalog: Sendable {
    private let entries: [CapabilityKind: Set<String>]?
    private let declarations: [String: [PluginOption]]

    /// Skips the "capability exists" check.
    package static let any = CapabilityCatalog(entries: nil, declarations: [:])

    private init(entries: [CapabilityKind: Set<String>]?, declarations: [String: [PluginOption]]) {
        self.entries = entries
        self.declarations = declarations
    }

    /// A catalog of exactly these (kind, name) pairs; `declaredOptions`
    /// holds, by capability name, the options of those that declare theirs.
    package init(_ pairs: some Sequence<(CapabilityKind, String)>, declaredOptions: [String: [PluginOption]] = [:]) {
        var entries: [CapabilityKind: Set<String>] = [:]
        for (kind, name) in pairs { entries[kind, default: []].insert(name) }
        self.init(entries: entries, declarations: declaredOptions)
    }

    /// The catalog of these plugin capabilities, with their declared options.
    package init(capabilities: [Capability]) {
        var declarations: [String: [PluginOption]] = [:]
        for c in capabilities { declarations[c.name] = c.declaredOptions }
        self.init(capabilities.map { ($0.kind, $0.name) }, declaredOptions: declarations)
    }

    /// Whether a capability of this kind and name is available (always true for ``any``).
    package func contains(_ kind: CapabilityKind, _ name: String) -> Bool {
        guard let entries else { return true }
        return entries[kind]?.contains(name) ?? false
    }

    /// The known names of one kind, sorted (for error messages).
    package func names(of kind: CapabilityKind) -> [String] {
        (entries?[kind] ?? []).sorted()
    }

    /// The options the capability `name` declares, or nil when it declares
    /// none (or is unknown): then its options are not checked.
    package func declaredOptions(of name: String) -> [PluginOption]? {
        declarations[name]
    }
}

/// One problem in a flow file: `file: json.path: message`.
package struct LintProblem: Sendable, Hashable, CustomStringConvertible {
    /// The file name as the daemon passed it.
    package let file: String
    /// Where in the document, for example `steps[2].fields[0].type`; `$` is
    /// the root. Empty for a problem no path locates: a syntax error, whose
    /// message names the line and column.
    package let path: String
    /// What is wrong and what was expected.
    package let message: String

    /// A problem at `path` in `file`.
    package init(file: String, path: String, message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    /// `file: json.path: message`, or `file: message` without a path.
    package var description: String { path.isEmpty ? "\(file): \(message)" : "\(file): \(path): \(message)" }
}

/// A flow file that did not load: every problem found, up to
/// ``FlowLoadLimits/maxProblems``.
package struct FlowLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems in document order; the last may count those left out.
    package let problems: [LintProblem]

    /// An error listing `problems`.
    package init(problems: [LintProblem]) {
        self.problems = problems
    }

    /// One problem per line.
    package var description: String { problems.map(\.description).joined(separator: "\n") }
}
