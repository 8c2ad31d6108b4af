/// How human output is decorated: ANSI colours (only on a terminal, never
/// with `NO_COLOR`) and nothing else. Colour never carries meaning alone:
/// every coloured word is also there in plain text.
package struct Style: Sendable, Hashable {
    /// Colour and bold are written.
    package var color: Bool

    /// A style with or without colour.
    package init(color: Bool) {
        self.color = color
    }

    /// No decoration at all.
    package static let plain = Style(color: false)

    /// Whether to colour output: `--color always|never`, otherwise only on a
    /// terminal, and never when `NO_COLOR` is set to anything non-empty
    /// (no-color.org) or `TERM` is `dumb`.
    package static func decide(option: ColorOption, isTerminal: Bool, environment: [String: String]) -> Style {
        switch option {
        case .always: return Style(color: true)
        case .never: return .plain
        case .auto:
            if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .plain }
            if environment["TERM"] == "dumb" { return .plain }
            return Style(color: isTerminal)
        }
    }

    private func sgr(_ code: String, _ text: String) -> String {
        color && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// Bold: titles and headers.
    package func bold(_ text: String) -> String { sgr("1", text) }
    /// Dim: help lines and secondary text.
    package func dim(_ text: String) -> String { sgr("2", text) }
    /// Red: errors.
    package func red(_ text: String) -> String { sgr("31", text) }
    /// Green: success.
    package func green(_ text: String) -> String { sgr("32", text) }
    /// Yellow: warnings and "Not finished".
    package func yellow(_ text: String) -> String { sgr("33", text) }
    /// Cyan: ids the person can type.
    package func cyan(_ text: String) -> String { sgr("36", text) }
    /// Bold and underlined: table headers.
    package func header(_ text: String) -> String { sgr("1;4", text) }

    /// A session or plugin state in its colour: `shown` (the state's name,
    /// perhaps translated) in the colour of `state`.
    package func state(_ shown: String, _ state: String? = nil) -> String {
        switch state ?? shown {
        case "submitted", "loaded": return green(shown)
        case "failed": return red(shown)
        case "submitting", "review", "disabled": return yellow(shown)
        default: return shown
        }
    }
}

/// `--color WHEN`.
package enum ColorOption: String, Sendable, CaseIterable {
    /// Colour on a terminal unless `NO_COLOR` or `TERM=dumb` says otherwise.
    case auto
    /// Colour even when piped.
    case always
    /// No colour.
    case never
}

/// The number of terminal columns `text` takes: wide East Asian characters
/// take two, combining marks and zero-width characters none. Enough to line
/// up tables of Japanese, Korean and Chinese labels.
package func displayWidth(_ text: String) -> Int {
    var width = 0
    for scalar in text.unicodeScalars {
        width += scalarWidth(scalar)
    }
    return width
}

private func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
    let v = scalar.value
    if v < 0x20 || (0x7F..<0xA0).contains(v) { return 0 }
    if v < 0x300 { return 1 }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    if v == 0x200B { return 0 }
    let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
        0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
        0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
        0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]
    return wide.contains { $0.contains(v) } ? 2 : 1
}

/// `text` broken into lines of at most `width` display columns, paragraph
/// by paragraph: at spaces, and between wide (CJK) characters, which need
/// none; a word longer than the line stays whole. A paragraph's leading
/// spaces indent each of its lines.
package func wrapped(_ text: String, width: Int) -> String {
    guard width > 0 else { return text }
    return text.split(separator: "\n", omittingEmptySubsequences: false).map { paragraph -> String in
        let indent = String(paragraph.prefix { $0 == " " })
        let room = max(width - indent.count, 1)
        // Words: a run of narrow characters, or one wide character; each
        // remembers whether a space came before it.
        var words: [(text: String, width: Int, spaced: Bool)] = []
        var spaced = false
        var joinsLast = false
        for character in paragraph.dropFirst(indent.count) {
            if character == " " {
                spaced = true
                joinsLast = false
                continue
            }
            let columns = displayWidth(String(character))
            if columns < 2, joinsLast, let last = words.indices.last {
                words[last].text.append(character)
                words[last].width += columns
            } else {
                words.append((String(character), columns, spaced))
            }
            joinsLast = columns < 2
            spaced = false
        }
        var lines: [String] = []
        var line = ""
        var used = 0
        for word in words {
            let gap = word.spaced && used > 0 ? 1 : 0
            // A line never begins with closing punctuation ("。", "、", "」"): it stays on the line before.
            let closes = !word.spaced && word.text.count == 1 && "、。，．」』）〕】！？：；".contains(word.text)
            if used > 0 && used + gap + word.width > room && !closes {
                lines.append(line)
                line = word.text
                used = word.width
            } else {
                line += (gap == 1 ? " " : "") + word.text
                used += gap + word.width
            }
        }
        lines.append(line)
        return lines.map { indent + $0 }.joined(separator: "\n")
    }.joined(separator: "\n")
}

/// `text` followed by spaces up to `width` display columns.
package func padded(_ text: String, to width: Int) -> String {
    let missing = width - displayWidth(text)
    return missing > 0 ? text + String(repeating: " ", count: missing) : text
}

/// Columns of text lined up with two spaces between them, like `systemctl
/// list-units`. Cells are measured before they are styled, so colour never
/// breaks the alignment; the last column is not padded.
package struct TextTable: Sendable {
    /// One cell: its text and how to decorate it.
    package struct Cell: Sendable {
        /// The plain text, measured for alignment.
        package var text: String
        /// Adds colour (or nothing) after the cell is measured.
        package var decorate: @Sendable (String) -> String

        /// A cell showing `text`, decorated by `decorate`.
        package init(_ text: String, _ decorate: @escaping @Sendable (String) -> String = { $0 }) {
            self.text = text
            self.decorate = decorate
        }
    }

    /// The column titles; no header line when empty.
    package var headers: [String]
    /// The rows.
    package var rows: [[Cell]] = []

    /// A table with these column titles.
    package init(headers: [String]) {
        self.headers = headers
    }

    /// Adds a row of plain cells.
    package mutating func add(_ cells: [String]) {
        rows.append(cells.map { Cell($0) })
    }

    /// Adds a row.
    package mutating func add(cells: [Cell]) {
        rows.append(cells)
    }

    /// The table as lines, each ending with a newline.
    package func render(style: Style, indent: String = "") -> String {
        let columns = max(headers.count, rows.map(\.count).max() ?? 0)
        var widths = [Int](repeating: 0, count: columns)
        for (i, header) in headers.enumerated() { widths[i] = displayWidth(header) }
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], displayWidth(cell.text)) }
        }
        var out = ""
        func line(_ cells: [Cell]) {
            var text = indent
            for (i, cell) in cells.enumerated() {
                let isLast = i == cells.count - 1
                let shown = cell.decorate(cell.text)
                text += shown
                if !isLast {
                    text += String(repeating: " ", count: max(0, widths[i] - displayWidth(cell.text)) + 2)
                }
            }
            while text.hasSuffix(" ") { text.removeLast() }
            out += text + "\n"
        }
        if !headers.isEmpty {
            line(headers.map { header in Cell(header) { style.header($0) } })
        }
        for row in rows { line(row) }
        return out
    }
}

/// A progress bar for "Step N of M": `width` cells, the done part filled.
package func progressBar(index: Int, count: Int, width: Int = 24, style: Style) -> String {
    guard count > 0, width > 0 else { return "" }
    let clamped = min(max(index, 0), count)
    let filled = (clamped * width + count / 2) / count
    let done = String(repeating: "█", count: filled)
    let rest = String(repeating: "░", count: width - filled)
    return style.cyan(done) + style.dim(rest)
}
