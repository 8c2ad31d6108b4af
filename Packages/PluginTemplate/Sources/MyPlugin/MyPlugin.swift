// The plugin's capabilities and its two entry points. Rename `myplugin`
// (the plugin's name and its capabilities' prefix) to something of yours.
import FlowKit

/// `myplugin.postcode`: a German postcode, five digits. Spaces around it are
/// fine; anything else gets a message in the session's language.
struct PostcodeValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        guard let text = value.textValue else { return nil }
        let trimmed = text.trimmingCharacters(in: " ")
        if trimmed.count == 5 && trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) { return nil }
        return Messages.text(.postcodeFormat, locale: context.locale, field.label)
    }

    func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? {
        Messages.text(.postcodeRule, locale: context.locale)
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
