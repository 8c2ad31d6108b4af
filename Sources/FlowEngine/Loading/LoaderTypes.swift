import FlowKit

/// The bounds on what the loader accepts. A file over any of them is refused
/// with a precise error; nothing in it can make the loader use unbounded time,
/// memory or stack. The defaults are documented in docs/flow-format.md.
public struct FlowLoadLimits: Sendable, Hashable {
    /// The largest file, in bytes.
    public var maxFileBytes = 1 << 20
    /// The deepest nesting of arrays and objects (the parser's recursion is
    /// bounded by this, and it is clamped to 256).
    public var maxDepth = 32
    /// The longest string of any kind, in UTF-8 bytes.
    public var maxStringBytes = 16 * 1024
    /// The longest step, field or option id, in bytes.
    public var maxIDLength = 64
    /// The most steps in a flow.
    public var maxSteps = 200
    /// The most fields on one step.
    public var maxFieldsPerStep = 50
    /// The most fields in the whole flow.
    public var maxFields = 1000
    /// The most options of one field (also for `optionsFrom` results).
    public var maxOptionsPerField = 500
    /// The most `rules` on a step, and the most `next` rules.
    public var maxRulesPerStep = 50
    /// The most plugin validators on one field.
    public var maxValidatorsPerField = 8
    /// The most translations of one string.
    public var maxTranslations = 64
    /// The most members of an `all`, `any` or `in` list.
    public var maxConditionItems = 100
    /// The longest submit time limit, in seconds.
    public var maxTimeoutSeconds = 3600.0
    /// Bounds on `pattern`.
    public var pattern = PatternLimits.default
    /// Bounds on expressions (format 2).
    package var expression = ExpressionLimits.default
    /// How many problems a failed load reports before it stops listing them.
    public var maxProblems = 50

    /// The default bounds; change single members as needed.
    public init() {}

    /// The bounds documented in docs/flow-format.md.
    public static let `default` = FlowLoadLimits()
}

/// The plugin capabilities that are available when a flow is loaded.
///
/// The linter refuses a flow that names a capability nobody provides. With
/// ``any`` the check is skipped (for `flowctl check` without a daemon).
public struct CapabilityCatalog: Sendable {
    private let entries: [CapabilityKind: Set<String>]?

    /// Skips the "capability exists" check.
    public static let any = CapabilityCatalog(entries: nil)

    private init(entries: [CapabilityKind: Set<String>]?) {
        self.entries = entries
    }

    /// A catalog of exactly these (kind, name) pairs.
    public init(_ pairs: some Sequence<(CapabilityKind, String)>) {
        var entries: [CapabilityKind: Set<String>] = [:]
        for (kind, name) in pairs { entries[kind, default: []].insert(name) }
        self.entries = entries
    }

    /// The capabilities of the given plugin capabilities.
    public init(capabilities: [Capability]) {
        self.init(capabilities.map { ($0.kind, $0.name) })
    }

    /// Whether a capability of this kind and name is available (always true for ``any``).
    public func contains(_ kind: CapabilityKind, _ name: String) -> Bool {
        guard let entries else { return true }
        return entries[kind]?.contains(name) ?? false
    }

    /// Whether this catalog skips the check.
    public var acceptsAnything: Bool { entries == nil }

    /// The known names of one kind, sorted (for error messages).
    public func names(of kind: CapabilityKind) -> [String] {
        (entries?[kind] ?? []).sorted()
    }
}

/// One problem in a flow file: `file: json.path: message`.
public struct LintProblem: Sendable, Hashable, CustomStringConvertible {
    /// The file name as the daemon passed it.
    public let file: String
    /// Where in the document, for example `steps[2].fields[0].type`; `$` is
    /// the root. Empty for a problem no path locates: a syntax error, whose
    /// message names the line and column.
    public let path: String
    /// What is wrong and what was expected.
    public let message: String

    /// A problem at `path` in `file`.
    public init(file: String, path: String, message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    /// `file: json.path: message`, or `file: message` without a path.
    public var description: String { path.isEmpty ? "\(file): \(message)" : "\(file): \(path): \(message)" }
}

/// A flow file that did not load: every problem found, up to
/// ``FlowLoadLimits/maxProblems``.
public struct FlowLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems in document order; the last may count those left out.
    public let problems: [LintProblem]

    /// An error listing `problems`.
    public init(problems: [LintProblem]) {
        self.problems = problems
    }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
