/// How a requested locale is matched against the locales a text is
/// available in: the one chain flowd's engine uses for its own strings and
/// flow files, and plugins use for their messages (``LocalizedMessage``).
///
/// The chain for a request is: the tag itself, then the tag with its last
/// subtag dropped, repeatedly (`de-CH` → `de`; `zh-Hant-TW` → `zh-Hant` → `zh`),
/// then any other available locale of the same language (`pt-PT` finds
/// `pt-BR`: a Portuguese reader is better served by Brazilian Portuguese than
/// by English), then `en`, then any `en-*`, and finally the first available one.
///
/// Requests are normalized first: `_` becomes `-`, a POSIX charset or modifier
/// (`de_CH.UTF-8@euro`) is dropped, `C` and `POSIX` mean `en`, and matching
/// ignores case. Chinese without a script subtag picks one from the region:
/// `zh-TW`, `zh-HK` and `zh-MO` mean `zh-Hant`, any other `zh` means `zh-Hans`.
public enum LocaleChain {
    /// The normalized form of a requested locale tag (see the type's doc).
    public static func normalize(_ tag: String) -> String {
        var t = Substring(tag)
        if let i = t.firstIndex(where: { $0 == "." || $0 == "@" }) { t = t[..<i] }
        let s = String(t.unicodeScalars.map { $0 == "_" ? "-" : Character($0) })
        if s.isEmpty || s == "C" || s == "POSIX" { return "en" }
        return s
    }

    /// A locale a client asks for, normalized, or nil when it is not a locale
    /// tag: ill-formed (``isWellFormed(_:)``), or a POSIX charset or modifier
    /// with no language before it (`.UTF-8`, `@euro`), which normalizing
    /// would otherwise turn into `en`. The empty tag, `C` and `POSIX` are `en`.
    public static func requested(_ tag: String) -> String? {
        if let first = tag.unicodeScalars.first, first == "." || first == "@" { return nil }
        let normalized = normalize(tag)
        return isWellFormed(normalized) ? normalized : nil
    }

    /// The tags to try, most specific first, before the "same language", `en`
    /// and "first" steps: `de_CH` → `de-CH`, `de`.
    public static func candidates(for tag: String) -> [String] {
        let normalized = normalize(tag)
        var parts = normalized.split(separator: "-").map(String.init)
        var out: [String] = []
        while !parts.isEmpty {
            out.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        // Chinese: insert the script implied by the region before plain `zh`.
        let lower = normalized.lowercased().split(separator: "-").map(String.init)
        if lower.first == "zh", !lower.contains("hans"), !lower.contains("hant") {
            let traditional = lower.contains("tw") || lower.contains("hk") || lower.contains("mo")
            let script = traditional ? "zh-Hant" : "zh-Hans"
            out.insert(script, at: max(0, out.count - 1))
        }
        return out
    }

    /// The index in `available` of the best match for `requested`, following
    /// the full chain, or nil when `available` is empty.
    /// Any collection of tags (a lazy map over translations, say), so the
    /// common case allocates nothing; inlinable, so a caller's collection
    /// type is specialized in the caller.
    @inlinable
    public static func bestMatch<Tags: Collection<String>>(for requested: String, in available: Tags) -> Int? {
        guard !available.isEmpty else { return nil }
        return exactMatch(for: requested, in: available) ?? chainMatch(for: requested, in: Array(available))
    }

    /// The whole chain, step by step; `available` is not empty. What
    /// ``bestMatch(for:in:)`` asks when ``exactMatch(for:in:)`` declines.
    public static func chainMatch(for requested: String, in available: [String]) -> Int {
        let lowered = available.map { $0.lowercased() }
        for c in candidates(for: requested) {
            if let i = lowered.firstIndex(of: c.lowercased()) { return i }
        }
        let language = candidates(for: requested).last?.lowercased() ?? "en"
        if let i = lowered.firstIndex(where: { $0.hasPrefix(language + "-") }) { return i }
        if let i = lowered.firstIndex(of: "en") { return i }
        if let i = lowered.firstIndex(where: { $0.hasPrefix("en-") }) { return i }
        return 0
    }

    /// The chain's answer when its first step decides, found without building
    /// the chain: every string a session shows is resolved through here, so
    /// the common case (the session's locale is one of the translations)
    /// must not allocate.
    ///
    /// When `requested` is made of ASCII letters, digits and `-` only, is not
    /// `C` or `POSIX` and is not Chinese, normalizing leaves it unchanged and
    /// it is the chain's first candidate (a bare `zh` puts `zh-Hans` first);
    /// the answer is then the first available tag equal to it ignoring case.
    /// Nil means "ask the whole chain", also when some available tag is not
    /// ASCII (where `lowercased()` could differ from ASCII case folding).
    @inlinable
    public static func exactMatch<Tags: Collection<String>>(for requested: String, in available: Tags) -> Int? {
        let bytes = requested.utf8
        guard !bytes.isEmpty, bytes.allSatisfy(isTagByte), requested != "C", requested != "POSIX" else { return nil }
        var language = bytes.prefix { $0 != 0x2D }.makeIterator()
        if let z = language.next(), let h = language.next(), language.next() == nil,
            lowerASCII(z) == 0x7A, lowerASCII(h) == 0x68
        {
            return nil
        }
        var found: Int?
        for (index, tag) in available.enumerated() {
            guard tag.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
            if found == nil && tag.utf8.elementsEqual(bytes, by: { lowerASCII($0) == lowerASCII($1) }) { found = index }
        }
        return found
    }

    @usableFromInline
    static func isTagByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D
    }

    @usableFromInline
    static func lowerASCII(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b + 0x20 : b }

    /// True for a tag of the shape `ll`, `lll` or those followed by `-` and
    /// subtags of 1 to 8 letters or digits (BCP 47 in practice), at most 35
    /// characters; `_` is accepted in place of `-`.
    public static func isWellFormed(_ tag: String) -> Bool {
        let s = String(tag.unicodeScalars.map { $0 == "_" ? "-" : Character($0) })
        guard s.utf8.count <= 35 else { return false }
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count),
            first.unicodeScalars.allSatisfy(isASCIILetter)
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (1...8).contains(part.count) && part.unicodeScalars.allSatisfy { isASCIILetter($0) || isASCIIDigit($0) }
        }
    }

    static func isASCIILetter(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) }
    static func isASCIIDigit(_ s: Unicode.Scalar) -> Bool { ("0"..."9").contains(s) }
}

/// One message a plugin shows a person, in every language it has, compiled
/// into the plugin: nothing is looked up on disk at run time (a SwiftPM
/// resource bundle, `Bundle.module`, is not found where a plugin is
/// installed). The translations are a dictionary literal, or a Swift source
/// generated from translators' files.
///
/// ```swift
/// enum Messages {
///     static let format = LocalizedMessage([
///         "en": "{label} must be a VAT number, such as DE123456789.",
///         "de": "{label} muss eine USt-IdNr. sein, z. B. DE123456789.",
///     ])
/// }
/// return Messages.format(context.locale, ["label": field.label])
/// ```
///
/// The text for a locale follows ``LocaleChain``, the chain flowd uses for
/// its own strings: `de_CH` → `de-CH` → `de` → another `de-*` → `en` → the
/// first language given. `{name}` placeholders are filled from the
/// arguments.
public struct LocalizedMessage: Sendable {
    /// Language tag (`en`, `de`, `pt-BR`, `zh-Hans`) → text with `{name}`
    /// placeholders, in the order given (the last step of the chain takes
    /// the first).
    public let translations: KeyValuePairs<String, String>

    /// A message in the languages given. Give `en`: it is the fallback for
    /// every language the message does not have.
    public init(_ translations: KeyValuePairs<String, String>) {
        self.translations = translations
    }

    /// The languages the message has, in the order given.
    public var locales: [String] { translations.map(\.key) }

    /// The text for `locale` (a session's `context.locale`), with each
    /// `{name}` replaced by `arguments[name]`; a placeholder without an
    /// argument stays as it is. Empty only for a message with no
    /// translations.
    public func callAsFunction(_ locale: String, _ arguments: [String: String] = [:]) -> String {
        guard let index = LocaleChain.bestMatch(for: locale, in: translations.lazy.map(\.key)) else { return "" }
        let text = translations[index].value
        return arguments.isEmpty ? text : Self.fill(text, arguments)
    }

    /// `template` with each `{name}` replaced by `arguments[name]`, in one
    /// pass (an argument's own braces are never replaced again).
    public static func fill(_ template: String, _ arguments: [String: String]) -> String {
        var result = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "}"),
                let value = arguments[String(rest[afterOpen..<close])]
            else {
                result.append("{")
                rest = rest[afterOpen...]
                continue
            }
            result += value
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }
}
