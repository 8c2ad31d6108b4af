/// Mnemonic letters for button labels that come from the daemon.
///
/// GTK marks the letter after `_` as the button's Alt shortcut. The daemon's
/// labels have no such mark, so one is chosen here: the first letter of the
/// label no other button of the same window uses yet. A literal `_` in a
/// label is doubled so GTK shows it as it is.
package enum Mnemonics {
    /// `labels` with a mnemonic added to each where a free letter exists,
    /// in order (earlier labels choose first); `taken` holds letters already
    /// in use (lowercased).
    package static func assign(_ labels: [String], taken: Set<Character> = []) -> [String] {
        var used = taken
        return labels.map { label in
            var out = ""
            var placed = false
            for ch in label {
                if ch == "_" {
                    out += "__"
                    continue
                }
                if !placed, ch.isLetter, let key = ch.lowercased().first, !used.contains(key) {
                    out += "_"
                    used.insert(key)
                    placed = true
                }
                out.append(ch)
            }
            return out
        }
    }
}
