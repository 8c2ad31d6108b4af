// The plugin's capabilities and its two entry points. Rename `myplugin`
// (the plugin's name and its capabilities' prefix) to something of yours.
import FlowKit

/// `myplugin.postcode`: a German postcode, five digits. Spaces are fine
/// (" 101 15 "): the validator hands back the postcode without them, which
/// flowd stores instead of what was typed. Anything else gets a message in
/// the session's language.
///
/// Options (declared, so flowd checks a flow's at load): `allowSpaces`
/// (default true): false refuses a postcode with spaces inside.
struct PostcodeValidator: FieldValidator, DeclaresOptions {
    static let declaredOptions = [
        PluginOption(name: "allowSpaces", type: .bool),
    ]

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        try await review(value, field: field, context: context).assessment.rejection
    }

    /// What flowd calls: the check, and the postcode without spaces.
    func review(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldReview {
        guard let text = value.textValue else { return FieldReview(.accepted) }
        let allowSpaces = context.options["allowSpaces"]?.boolValue ?? true
        let trimmed = text.trimmingCharacters(in: " ")
        let digits = allowSpaces ? trimmed.filter { $0 != " " } : String(trimmed)
        guard digits.count == 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return FieldReview(.rejected(Messages.postcodeFormat(context.locale, ["label": field.label])))
        }
        if digits != text {
            // For the administrator, in English; never the person's answer.
            context.log.debug("removed spaces from a postcode", ["removed": .integer(Int64(text.count - digits.count))])
        }
        return .accepted(normalizedTo: .text(digits))
    }

    func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? {
        Messages.postcodeRule(context.locale)
    }
}

extension String {
    /// The string without leading and trailing `character`s.
    func trimmingCharacters(in character: Character) -> Substring {
        let start = firstIndex { $0 != character } ?? endIndex
        let end = lastIndex { $0 != character }.map { index(after: $0) } ?? start
        return self[start..<max(start, end)]
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "myplugin", version: "1.0",
        capabilities: [
            .fieldValidator("myplugin.postcode", PostcodeValidator()),
        ]
    ).exportRetained()
}
