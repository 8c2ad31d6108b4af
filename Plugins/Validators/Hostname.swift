import FlowKit
import FlowdPluginSupport

/// `flowd.hostname`: a host name as RFC 1123 §2.1 defines it.
///
/// Dot-separated labels of ASCII letters, digits and hyphens; each label 1–63
/// characters and not starting or ending with a hyphen; 253 characters in all;
/// no trailing dot. The last label must not be all digits (RFC 3696 §2), so an
/// IPv4 address is not a host name.
///
/// Options: `requireDomain` (bool, default false): demand at least two labels
/// (`printer-2.example.org`, not `printer-2`).
struct HostnameValidator: FieldValidator {
    static let name = "flowd.hostname"

    enum Problem: Equatable {
        case tooLong, labelTooLong, characters, numericEnd, needsDomain
    }

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let options = try PluginOptions(context.options, capability: Self.name, allowed: ["requireDomain"])
        guard let text = value.textValue else {
            throw PluginConfigurationError(Self.name, "works on text fields only")
        }
        guard let problem = Self.check(text, requireDomain: try options.bool("requireDomain") ?? false) else {
            return nil
        }
        return HostnameMessages.text(for: problem)(context.locale)
    }

    /// The first problem with `name`, or nil for a valid host name.
    static func check(_ name: String, requireDomain: Bool) -> Problem? {
        let scalars = name.unicodeScalars
        guard !scalars.isEmpty else { return .characters }
        guard scalars.count <= 253 else { return .tooLong }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty else { return .characters }
            guard label.unicodeScalars.count <= 63 else { return .labelTooLong }
            let allowed = label.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
            }
            guard allowed, label.first != "-", label.last != "-" else { return .characters }
        }
        if let last = labels.last, last.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) {
            return .numericEnd
        }
        if requireDomain && labels.count < 2 { return .needsDomain }
        return nil
    }
}

enum HostnameMessages {
    static func text(for problem: HostnameValidator.Problem) -> Localized {
        switch problem {
        case .tooLong: return tooLong
        case .labelTooLong: return labelTooLong
        case .characters: return characters
        case .numericEnd: return numericEnd
        case .needsDomain: return needsDomain
        }
    }

    static let tooLong = Localized([
        "en": "A host name can be at most 253 characters long.",
        "de": "Ein Hostname darf höchstens 253 Zeichen lang sein.",
        "fr": "Un nom d’hôte ne peut pas dépasser 253 caractères.",
        "es": "Un nombre de host puede tener como máximo 253 caracteres.",
    ])
    static let labelTooLong = Localized([
        "en": "Each part of a host name can be at most 63 characters long.",
        "de": "Jeder Teil eines Hostnamens darf höchstens 63 Zeichen lang sein.",
        "fr": "Chaque partie d’un nom d’hôte ne peut pas dépasser 63 caractères.",
        "es": "Cada parte de un nombre de host puede tener como máximo 63 caracteres.",
    ])
    static let characters = Localized([
        "en": "Use letters, digits and hyphens in parts separated by dots, such as printer-2.example.org.",
        "de": "Verwenden Sie Buchstaben, Ziffern und Bindestriche in durch Punkte getrennten Teilen, z. B. drucker-2.example.org.",
        "fr": "Utilisez des lettres, des chiffres et des tirets, en parties séparées par des points, par exemple imprimante-2.example.org.",
        "es": "Use letras, dígitos y guiones en partes separadas por puntos, por ejemplo impresora-2.example.org.",
    ])
    static let numericEnd = Localized([
        "en": "The last part of a host name cannot be only digits.",
        "de": "Der letzte Teil eines Hostnamens darf nicht nur aus Ziffern bestehen.",
        "fr": "La dernière partie d’un nom d’hôte ne peut pas être composée uniquement de chiffres.",
        "es": "La última parte de un nombre de host no puede tener solo dígitos.",
    ])
    static let needsDomain = Localized([
        "en": "Enter a full host name with its domain, such as printer-2.example.org.",
        "de": "Geben Sie einen vollständigen Hostnamen mit Domain ein, z. B. drucker-2.example.org.",
        "fr": "Saisissez un nom d’hôte complet avec son domaine, par exemple imprimante-2.example.org.",
        "es": "Introduzca un nombre de host completo con su dominio, por ejemplo impresora-2.example.org.",
    ])
}
