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
struct UsernameAvailableValidator: FieldValidator {
    static let name = "flowd.username-available"
    static let maximumLength = 32

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let options = try PluginOptions(context.options, capability: Self.name, allowed: ["checkGroups"])
        guard let text = value.textValue else {
            throw PluginConfigurationError(Self.name, "works on text fields only")
        }
        guard Self.isValidName(text) else { return UsernameMessages.invalid(context.locale) }
        if try NameService.userExists(text) {
            return Localized.fill(UsernameMessages.taken(context.locale), ["name": text])
        }
        if try options.bool("checkGroups") ?? true, try NameService.groupExists(text) {
            return Localized.fill(UsernameMessages.taken(context.locale), ["name": text])
        }
        return nil
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
    /// Whether a user called `name` exists.
    static func userExists(_ name: String) throws(NameServiceError) -> Bool {
        do {
            return try UserDatabase.user(named: name) != nil
        } catch {
            throw NameServiceError(description: "\(error)")
        }
    }

    /// Whether a group called `name` exists.
    static func groupExists(_ name: String) throws(NameServiceError) -> Bool {
        do {
            return try UserDatabase.groupExists(named: name)
        } catch {
            throw NameServiceError(description: "\(error)")
        }
    }
}

enum UsernameMessages {
    static let invalid = Localized([
        "en": "Use up to 32 lowercase letters, digits, “-” and “_”, starting with a letter.",
        "de": "Verwenden Sie bis zu 32 Kleinbuchstaben, Ziffern, „-“ und „_“, beginnend mit einem Buchstaben.",
        "fr": "Utilisez jusqu’à 32 lettres minuscules, chiffres, « - » et « _ », en commençant par une lettre.",
        "es": "Use hasta 32 letras minúsculas, dígitos, «-» y «_», empezando por una letra.",
    ])
    static let taken = Localized([
        "en": "The user name “{name}” is already taken.",
        "de": "Der Benutzername „{name}“ ist schon vergeben.",
        "fr": "Le nom d’utilisateur « {name} » est déjà pris.",
        "es": "El nombre de usuario «{name}» ya está en uso.",
    ])
}
