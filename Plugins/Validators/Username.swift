import FlowKit
import FlowdPluginSupport
import FlowdSystem

/// `flowd.username-available`: a user name that is valid for a new account
/// and not taken on this system.
///
/// Valid means 1–32 characters: lowercase ASCII letters, digits, `_` and `-`,
/// starting with a letter or `_` (what Debian's `adduser` and `useradd`
/// accept by default, and what is portable). Taken means the name service
/// (`getpwnam_r`, so `/etc/passwd`, LDAP, systemd-userdb, … as
/// `/etc/nsswitch.conf` says) knows a user of that name — or, unless
/// `{"checkGroups": false}`, a group of that name, since a new user normally
/// gets a group of the same name. A lookup that fails (rather than finding
/// nothing) throws: the daemon then refuses the value (it fails closed).
struct UsernameAvailableValidator: FieldValidator, DeclaresOptions {
    static let name = "flowd.username-available"
    static let declaredOptions = [PluginOption(name: "checkGroups", type: .bool)]
    static let maximumLength = 32

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let options = try PluginOptions(context.options, capability: Self.name, declared: Self.declaredOptions)
        guard let text = value.textValue else {
            throw PluginConfigurationError(Self.name, "works on text fields only")
        }
        guard Self.isValidName(text) else { return UsernameMessages.invalid(context.locale) }
        if try NameService.isTaken(text, checkingGroups: options.bool("checkGroups") ?? true) {
            return UsernameMessages.taken(context.locale, ["name": text])
        }
        return nil
    }

    /// "Up to 32 lowercase letters, digits, “-” and “_”, not yet taken".
    func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? {
        _ = try PluginOptions(context.options, capability: Self.name, declared: Self.declaredOptions).bool("checkGroups")
        return UsernameMessages.rule(context.locale)
    }

    static func isValidName(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        guard let first = scalars.first, scalars.count <= maximumLength else { return false }
        guard ("a"..."z").contains(first) || first == "_" else { return false }
        return scalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" }
    }
}

/// A name-service lookup that failed (not: found nothing), as the
/// plugin's own error.
struct NameServiceError: Error, CustomStringConvertible {
    var description: String
}

/// Users and groups, through FlowdSystem's `UserDatabase`.
enum NameService {
    /// Whether a user called `name` exists, or (when `checkingGroups`) a group.
    static func isTaken(_ name: String, checkingGroups: Bool) throws(NameServiceError) -> Bool {
        do {
            return try UserDatabase.user(named: name) != nil || (checkingGroups && UserDatabase.groupExists(named: name))
        } catch {
            throw NameServiceError(description: "\(error)")
        }
    }
}

enum UsernameMessages {
    static let invalid = LocalizedMessage([
        "en": "Use up to 32 lowercase letters, digits, “-” and “_”, starting with a letter.",
        "de": "Verwenden Sie bis zu 32 Kleinbuchstaben, Ziffern, „-“ und „_“, beginnend mit einem Buchstaben.",
        "fr": "Utilisez jusqu’à 32 lettres minuscules, chiffres, « - » et « _ », en commençant par une lettre.",
        "es": "Use hasta 32 letras minúsculas, dígitos, «-» y «_», empezando por una letra.",
        "it": "Usi fino a 32 lettere minuscole, cifre, «-» e «_», iniziando con una lettera.",
        "pt-BR": "Use até 32 letras minúsculas, dígitos, “-” e “_”, começando com uma letra.",
        "ja": "小文字の英字・数字・「-」・「_」を 32 文字以内で使い、英字で始めてください。",
        "ko": "영문 소문자, 숫자, '-', '_'를 32자 이내로 사용하고 영문자로 시작하세요.",
        "zh-Hans": "请使用最多 32 个小写字母、数字、“-”和“_”，并以字母开头。",
        "zh-Hant": "請使用最多 32 個小寫字母、數字、「-」和「_」，並以字母開頭。",
    ])
    static let taken = LocalizedMessage([
        "en": "The user name “{name}” is already taken.",
        "de": "Der Benutzername „{name}“ ist schon vergeben.",
        "fr": "Le nom d’utilisateur « {name} » est déjà pris.",
        "es": "El nombre de usuario «{name}» ya está en uso.",
        "it": "Il nome utente «{name}» è già in uso.",
        "pt-BR": "O nome de usuário “{name}” já está em uso.",
        "ja": "ユーザー名「{name}」はすでに使われています。",
        "ko": "사용자 이름 '{name}'은(는) 이미 사용 중입니다.",
        "zh-Hans": "用户名“{name}”已被占用。",
        "zh-Hant": "使用者名稱「{name}」已被使用。",
    ])

    /// The rule (`describeRule`).
    static let rule = LocalizedMessage([
        "en": "Up to 32 lowercase letters, digits, “-” and “_”, not yet taken",
        "de": "Bis zu 32 Kleinbuchstaben, Ziffern, „-“ und „_“, noch nicht vergeben",
        "fr": "Jusqu’à 32 lettres minuscules, chiffres, « - » et « _ », pas encore pris",
        "es": "Hasta 32 letras minúsculas, dígitos, «-» y «_», que no esté en uso",
        "it": "Fino a 32 lettere minuscole, cifre, «-» e «_», non ancora in uso",
        "pt-BR": "Até 32 letras minúsculas, dígitos, “-” e “_”, ainda não usado",
        "ja": "小文字の英字・数字・「-」・「_」で 32 文字以内、まだ使われていない名前",
        "ko": "영문 소문자, 숫자, '-', '_'로 32자 이내, 아직 사용되지 않은 이름",
        "zh-Hans": "最多 32 个小写字母、数字、“-”和“_”，且未被占用",
        "zh-Hant": "最多 32 個小寫字母、數字、「-」和「_」，且未被使用",
    ])
}
