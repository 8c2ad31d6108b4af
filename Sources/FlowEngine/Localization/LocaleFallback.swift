/// How a requested locale is matched against the locales a text is available in.
///
/// The chain for a request is: the tag itself, then the tag with its last
/// subtag dropped, repeatedly (`pt-BR` → `pt`; `zh-Hant-TW` → `zh-Hant` → `zh`),
/// then any other available locale of the same language (`pt-PT` finds
/// `pt-BR`: a Portuguese reader is better served by Brazilian Portuguese than
/// by English), then `en`, then any `en-*`, and finally the first available one.
///
/// Requests are normalized first: `_` becomes `-`, a POSIX charset or modifier
/// (`de_DE.UTF-8@euro`) is dropped, `C` and `POSIX` mean `en`, and matching
/// ignores case. Chinese without a script subtag picks one from the region:
/// `zh-TW`, `zh-HK` and `zh-MO` mean `zh-Hant`, any other `zh` means `zh-Hans`.
package enum LocaleFallback {
    /// The normalized form of a requested locale tag (see the type's doc).
    package static func normalize(_ tag: String) -> String {
        var t = Substring(tag)
        if let i = t.firstIndex(where: { $0 == "." || $0 == "@" }) { t = t[..<i] }
        let s = String(t).replacingUnderscores()
        if s.isEmpty || s == "C" || s == "POSIX" { return "en" }
        return s
    }

    /// A locale a client asks for, normalized, or nil when it is not a locale
    /// tag: ill-formed (``isWellFormed(_:)``), or a POSIX charset or modifier
    /// with no language before it (`.UTF-8`, `@euro`), which normalizing
    /// would otherwise turn into `en`. The empty tag, `C` and `POSIX` are `en`.
    package static func requested(_ tag: String) -> String? {
        if let first = tag.unicodeScalars.first, first == "." || first == "@" { return nil }
        let normalized = normalize(tag)
        return isWellFormed(normalized) ? normalized : nil
    }

    /// The tags to try, most specific first, before the "same language", `en`
    /// and "first" steps.
    package static func candidates(for tag: String) -> [String] {
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
    /// common case allocates nothing.
    package static func bestMatch<Tags: Collection<String>>(for requested: String, in available: Tags) -> Int? {
        guard !available.isEmpty else { return nil }
        return exactMatch(for: requested, in: available) ?? chainMatch(for: requested, in: Array(available))
    }

    /// The whole chain, step by step; `available` is not empty.
    static func chainMatch(for requested: String, in available: [String]) -> Int {
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
    static func exactMatch<Tags: Collection<String>>(for requested: String, in available: Tags) -> Int? {
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

    private static func isTagByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D
    }

    private static func lowerASCII(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b + 0x20 : b }

    /// True for a tag of the shape `ll`, `lll` or those followed by `-` and
    /// subtags of 1 to 8 letters or digits (BCP 47 in practice), at most 35
    /// characters; `_` is accepted in place of `-`.
    package static func isWellFormed(_ tag: String) -> Bool {
        let s = tag.replacingUnderscores()
        guard s.utf8.count <= 35 else { return false }
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count),
            first.unicodeScalars.allSatisfy(isASCIILetter)
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (1...8).contains(part.count) && part.unicodeScalars.allSatisfy { isASCIILetter($0) || isASCIIDigit($0) }
        }
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(unicodeScalars.map { $0 == "_" ? "-" : Character($0) })
    }
}
