/// A configuration file in the systemd manner: `[Section]` headers, `Key=Value`
/// lines, `#` and `;` comments, and repeated keys for lists.
///
/// Parsing is separate from meaning: this type only knows the syntax, and
/// ``DaemonConfiguration`` decides which sections and keys exist.
package struct INIFile: Sendable, Equatable {
    /// One `Key=Value` assignment, with where it came from for error messages.
    package struct Assignment: Sendable, Equatable {
        package var section: String
        package var key: String
        package var value: String
        package var file: String
        package var line: Int
    }

    /// Every assignment in file order.
    package private(set) var assignments: [Assignment] = []

    /// Parses `text`; `file` names it in errors.
    package init(parsing text: String, file: String) throws(ConfigurationError) {
        var section: String?
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw ConfigurationError(file: file, line: lineNumber, message: "malformed section header \"\(line)\"")
                }
                section = String(line.dropFirst().dropLast()).trimmingWhitespace()
                continue
            }
            guard let eq = line.firstIndex(of: "=") else {
                throw ConfigurationError(file: file, line: lineNumber, message: "expected Key=Value, found \"\(line)\"")
            }
            guard let currentSection = section else {
                throw ConfigurationError(file: file, line: lineNumber, message: "assignment before any [Section] header")
            }
            let key = String(line[..<eq]).trimmingWhitespace()
            let value = String(line[line.index(after: eq)...]).trimmingWhitespace()
            guard !key.isEmpty else {
                throw ConfigurationError(file: file, line: lineNumber, message: "missing key before \"=\"")
            }
            assignments.append(Assignment(section: currentSection, key: key, value: value, file: file, line: lineNumber))
        }
    }
}

/// A configuration problem: which file, which line, what was wrong.
package struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    package var file: String
    package var line: Int?
    package var message: String

    package init(file: String, line: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    package var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces, tabs and carriage returns.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
