/// A capability that says which `options` it takes, so that flowd checks
/// them when it loads a flow: a flow that gives an option the capability does
/// not have (a typo), leaves out a required one, or gives one of the wrong
/// type is refused at load, with the JSON path, instead of failing when a
/// person uses it.
///
/// Conform the capability's type to it next to its own protocol:
///
/// ```swift
/// struct VATNumber: FieldValidator, DeclaresOptions {
///     static let declaredOptions = [
///         PluginOption(name: "countries", type: .strings, required: true),
///         PluginOption(name: "allowSpaces", type: .bool),
///     ]
///     …
/// }
/// ```
///
/// A capability that does not conform is not checked: its options reach it
/// as the flow gives them. An empty declaration means "takes no options".
/// flowd checks names, presence and JSON types only; ranges and meanings
/// stay the capability's own check when it is called.
public protocol DeclaresOptions {
    /// Every option the capability takes. Read once, when the plugin loads.
    static var declaredOptions: [PluginOption] { get }
}

/// One option a capability takes (``DeclaresOptions``).
public struct PluginOption: Sendable, Hashable {
    /// The key in the flow file's `options` object.
    public var name: String
    /// The JSON type its value must have.
    public var type: PluginOptionType
    /// Whether a flow must give it.
    public var required: Bool

    /// Declares the option `name` of `type`, optional unless `required`.
    public init(name: String, type: PluginOptionType, required: Bool = false) {
        self.name = name
        self.type = type
        self.required = required
    }
}

/// The JSON type of a ``PluginOption``'s value.
public enum PluginOptionType: String, Sendable, Hashable, CaseIterable {
    /// A string.
    case string
    /// An array of strings.
    case strings
    /// Any number.
    case number
    /// A whole number.
    case integer
    /// `true` or `false`.
    case bool
    /// An object whose values are strings (`{"Authorization": "…"}`).
    case stringMap = "string-map"
    /// Any object.
    case object
    /// Any JSON value: the capability checks it itself.
    case any

    /// Whether `value` has this type.
    public func accepts(_ value: JSONValue) -> Bool {
        switch self {
        case .string: return value.stringValue != nil
        case .strings: return value.arrayValue?.allSatisfy { $0.stringValue != nil } ?? false
        case .number: return value.numberValue != nil
        case .integer: return value.intValue != nil
        case .bool: return value.boolValue != nil
        case .stringMap: return value.objectValue?.values.allSatisfy { $0.stringValue != nil } ?? false
        case .object: return value.objectValue != nil
        case .any: return true
        }
    }

    /// The type in words, for messages: "a string", "an array of strings".
    public var summary: String {
        switch self {
        case .string: return "a string"
        case .strings: return "an array of strings"
        case .number: return "a number"
        case .integer: return "a whole number"
        case .bool: return "true or false"
        case .stringMap: return "an object of strings"
        case .object: return "an object"
        case .any: return "any value"
        }
    }
}

/// What does not fit a declaration in a flow's `options`
/// (``PluginOption/problems(in:declared:)``).
public enum PluginOptionProblem: Sendable, Hashable, CustomStringConvertible {
    /// A key the capability does not declare.
    case unknown(key: String)
    /// A required option that is absent (or `null`).
    case missing(PluginOption)
    /// An option whose value has another type than declared.
    case wrongType(PluginOption)

    /// The problem as a sentence, without the capability's name.
    public var description: String {
        switch self {
        case .unknown(let key): return "unknown option \"\(key)\""
        case .missing(let option): return "option \"\(option.name)\" is required (\(option.type.summary))"
        case .wrongType(let option): return "option \"\(option.name)\" must be \(option.type.summary)"
        }
    }
}

extension PluginOption {
    /// What flowd finds wrong with `options` for a capability that declares
    /// `declared`: unknown and mistyped keys in key order, then the missing
    /// required options in declaration order. Empty when they fit. A `null`
    /// value counts as absent.
    public static func problems(in options: [String: JSONValue], declared: [PluginOption]) -> [PluginOptionProblem] {
        var problems: [PluginOptionProblem] = []
        for key in options.keys.sorted() {
            guard let value = options[key] else { continue }
            guard let option = declared.first(where: { $0.name == key }) else {
                problems.append(.unknown(key: key))
                continue
            }
            if value != .null && !option.type.accepts(value) { problems.append(.wrongType(option)) }
        }
        for option in declared where option.required && (options[option.name] ?? .null) == .null {
            problems.append(.missing(option))
        }
        return problems
    }

    /// The most options one capability may declare.
    public static let maximumDeclared = 64

    /// The first thing wrong with a declaration, or nil: at most
    /// ``maximumDeclared`` options, and every name 1 to 64 ASCII letters,
    /// digits, `-` or `_`, appearing once. flowd refuses a
    /// plugin whose declaration has such a problem.
    public static func declarationProblem(in declared: [PluginOption]) -> String? {
        if declared.count > maximumDeclared { return "declares \(declared.count) options, at most \(maximumDeclared) are allowed" }
        var seen = Set<String>()
        for option in declared {
            let scalars = option.name.unicodeScalars
            let valid = !scalars.isEmpty && scalars.count <= 64
                && scalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
            // Only a valid name is echoed: the text reaches logs and terminals.
            if !valid { return "declares an invalid option name: use 1 to 64 ASCII letters, digits, '-' and '_'" }
            if !seen.insert(option.name).inserted { return "declares the option \"\(option.name)\" twice" }
        }
        return nil
    }
}

extension Capability {
    /// The options the capability declares (``DeclaresOptions``), or nil
    /// when its type does not conform: then its options are not checked.
    public var declaredOptions: [PluginOption]? {
        let implementation: Any
        switch self {
        case .fieldValidator(_, let c): implementation = c
        case .stepValidator(_, let c): implementation = c
        case .submitAction(_, let c): implementation = c
        case .optionsProvider(_, let c): implementation = c
        case .prefillProvider(_, let c): implementation = c
        }
        guard let declaring = implementation as? any DeclaresOptions else { return nil }
        return type(of: declaring).declaredOptions
    }
}
