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
struct HostnameValidator: FieldValidator, DeclaresOptions {
    static let name = "flowd.hostname"
    static let declaredOptions = [PluginOption(name: "requireDomain", type: .bool)]

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let requireDomain = try Self.requireDomain(context.options)
        guard let text = value.textValue else {
            throw PluginConfigurationError(Self.name, "works on text fields only")
        }
        return Self.problem(with: text, requireDomain: requireDomain).map { $0(context.locale) }
    }

    /// "A host name, such as printer-2.example.org" (with its domain when
    /// `requireDomain` is set).
    func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? {
        let message = try Self.requireDomain(context.options) ? HostnameMessages.fullName : HostnameMessages.name
        return message(context.locale)
    }

    /// The `requireDomain` option, checked.
    static func requireDomain(_ values: [String: JSONValue]) throws -> Bool {
        let options = try PluginOptions(values, capability: name, declared: declaredOptions)
        return try options.bool("requireDomain") ?? false
    }

    /// The message for the first problem with `name`, or nil for a valid host name.
    static func problem(with name: String, requireDomain: Bool) -> LocalizedMessage? {
        let m = HostnameMessages.self
        let scalars = name.unicodeScalars
        guard !scalars.isEmpty else { return m.characters }
        guard scalars.count <= 253 else { return m.tooLong }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty else { return m.characters }
            guard label.unicodeScalars.count <= 63 else { return m.labelTooLong }
            let allowed = label.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
            }
            guard allowed, label.first != "-", label.last != "-" else { return m.characters }
        }
        if let last = labels.last, last.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) {
            return m.numericEnd
        }
        if requireDomain && labels.count < 2 { return m.needsDomain }
        return nil
    }
}

enum HostnameMessages {
    static let tooLong = LocalizedMessage([
        "en": "A host name can be at most 253 characters long.",
        "de": "Ein Hostname darf höchstens 253 Zeichen lang sein.",
        "fr": "Un nom d’hôte ne peut pas dépasser 253 caractères.",
        "es": "Un nombre de host puede tener como máximo 253 caracteres.",
        "it": "Un nome host può avere al massimo 253 caratteri.",
        "pt-BR": "Um nome de host pode ter no máximo 253 caracteres.",
        "ja": "ホスト名は 253 文字以内にしてください。",
        "ko": "호스트 이름은 최대 253자까지 가능합니다.",
        "zh-Hans": "主机名最多 253 个字符。",
        "zh-Hant": "主機名稱最多 253 個字元。",
    ])
    static let labelTooLong = LocalizedMessage([
        "en": "Each part of a host name can be at most 63 characters long.",
        "de": "Jeder Teil eines Hostnamens darf höchstens 63 Zeichen lang sein.",
        "fr": "Chaque partie d’un nom d’hôte ne peut pas dépasser 63 caractères.",
        "es": "Cada parte de un nombre de host puede tener como máximo 63 caracteres.",
        "it": "Ogni parte di un nome host può avere al massimo 63 caratteri.",
        "pt-BR": "Cada parte de um nome de host pode ter no máximo 63 caracteres.",
        "ja": "ホスト名の各部分は 63 文字以内にしてください。",
        "ko": "호스트 이름의 각 부분은 최대 63자까지 가능합니다.",
        "zh-Hans": "主机名的每一部分最多 63 个字符。",
        "zh-Hant": "主機名稱的每一部分最多 63 個字元。",
    ])
    static let characters = LocalizedMessage([
        "en": "Use letters, digits and hyphens in parts separated by dots, such as printer-2.example.org.",
        "de": "Verwenden Sie Buchstaben, Ziffern und Bindestriche in durch Punkte getrennten Teilen, z. B. drucker-2.example.org.",
        "fr": "Utilisez des lettres, des chiffres et des tirets, en parties séparées par des points, par exemple imprimante-2.example.org.",
        "es": "Use letras, dígitos y guiones en partes separadas por puntos, por ejemplo impresora-2.example.org.",
        "it": "Usi lettere, cifre e trattini in parti separate da punti, ad esempio stampante-2.example.org.",
        "pt-BR": "Use letras, dígitos e hifens em partes separadas por pontos, por exemplo impressora-2.example.org.",
        "ja": "ドットで区切った各部分に英字・数字・ハイフンを使ってください（例: printer-2.example.org）。",
        "ko": "점으로 구분된 각 부분에 영문자, 숫자, 하이픈을 사용하세요(예: printer-2.example.org).",
        "zh-Hans": "请在以点分隔的各部分中使用字母、数字和连字符，例如 printer-2.example.org。",
        "zh-Hant": "請在以點分隔的各部分中使用字母、數字和連字號，例如 printer-2.example.org。",
    ])
    static let numericEnd = LocalizedMessage([
        "en": "The last part of a host name cannot be only digits.",
        "de": "Der letzte Teil eines Hostnamens darf nicht nur aus Ziffern bestehen.",
        "fr": "La dernière partie d’un nom d’hôte ne peut pas être composée uniquement de chiffres.",
        "es": "La última parte de un nombre de host no puede tener solo dígitos.",
        "it": "L’ultima parte di un nome host non può essere composta solo da cifre.",
        "pt-BR": "A última parte de um nome de host não pode ter apenas dígitos.",
        "ja": "ホスト名の最後の部分を数字だけにすることはできません。",
        "ko": "호스트 이름의 마지막 부분은 숫자로만 이루어질 수 없습니다.",
        "zh-Hans": "主机名的最后一部分不能只有数字。",
        "zh-Hant": "主機名稱的最後一部分不能只有數字。",
    ])
    static let needsDomain = LocalizedMessage([
        "en": "Enter a full host name with its domain, such as printer-2.example.org.",
        "de": "Geben Sie einen vollständigen Hostnamen mit Domain ein, z. B. drucker-2.example.org.",
        "fr": "Saisissez un nom d’hôte complet avec son domaine, par exemple imprimante-2.example.org.",
        "es": "Introduzca un nombre de host completo con su dominio, por ejemplo impresora-2.example.org.",
        "it": "Inserisca un nome host completo con il suo dominio, ad esempio stampante-2.example.org.",
        "pt-BR": "Digite um nome de host completo com o domínio, por exemplo impressora-2.example.org.",
        "ja": "ドメインを含む完全なホスト名を入力してください（例: printer-2.example.org）。",
        "ko": "도메인을 포함한 전체 호스트 이름을 입력하세요(예: printer-2.example.org).",
        "zh-Hans": "请输入包含域名的完整主机名，例如 printer-2.example.org。",
        "zh-Hant": "請輸入包含網域的完整主機名稱，例如 printer-2.example.org。",
    ])

    // Descriptions of the rule (`describeRule`).

    static let name = LocalizedMessage([
        "en": "A host name, such as printer-2.example.org",
        "de": "Ein Hostname, z. B. drucker-2.example.org",
        "fr": "Un nom d’hôte, par exemple imprimante-2.example.org",
        "es": "Un nombre de host, por ejemplo impresora-2.example.org",
        "it": "Un nome host, ad esempio stampante-2.example.org",
        "pt-BR": "Um nome de host, por exemplo impressora-2.example.org",
        "ja": "ホスト名（例: printer-2.example.org）",
        "ko": "호스트 이름(예: printer-2.example.org)",
        "zh-Hans": "主机名，例如 printer-2.example.org",
        "zh-Hant": "主機名稱，例如 printer-2.example.org",
    ])
    static let fullName = LocalizedMessage([
        "en": "A full host name with its domain, such as printer-2.example.org",
        "de": "Ein vollständiger Hostname mit Domain, z. B. drucker-2.example.org",
        "fr": "Un nom d’hôte complet avec son domaine, par exemple imprimante-2.example.org",
        "es": "Un nombre de host completo con su dominio, por ejemplo impresora-2.example.org",
        "it": "Un nome host completo con il suo dominio, ad esempio stampante-2.example.org",
        "pt-BR": "Um nome de host completo com o domínio, por exemplo impressora-2.example.org",
        "ja": "ドメインを含む完全なホスト名（例: printer-2.example.org）",
        "ko": "도메인을 포함한 전체 호스트 이름(예: printer-2.example.org)",
        "zh-Hans": "包含域名的完整主机名，例如 printer-2.example.org",
        "zh-Hant": "包含網域的完整主機名稱，例如 printer-2.example.org",
    ])
}
