import FlowdSystem

/// Writes one plain line per entry to stderr (or another descriptor):
///
///     flowd[4242]: warning: plugin call timed out (session=0f3a… plugin=example.vat)
///
/// Field names are shown in lowercase, without the application's prefix
/// (``hiddenFieldPrefix``, `FLOWD_` for flowd's `FLOWD_SESSION`). Newlines
/// and other control characters in the message and values are escaped
/// (`\n`, `\t`, `\x1b`), so every entry is exactly one line; values with
/// spaces, quotes or `=` are quoted. Each line is one `write(2)`, so lines
/// from different threads do not interleave.
package struct StderrBackend: LogBackend {
    /// The descriptor written to; 2 by default.
    package var fileDescriptor: Int32
    /// The prefix left out of field names in lines (empty: none).
    package var hiddenFieldPrefix: String
    /// Lines start with the syslog priority (`<3>cannot open …`) instead of
    /// the identifier, pid and level name: for a descriptor connected to the
    /// journal (systemd's `SyslogLevelPrefix=`, on by default), which adds
    /// those itself and files the line at that priority.
    package var levelPrefix: Bool

    /// A backend writing to `fileDescriptor` (stderr by default).
    package init(fileDescriptor: Int32 = 2, hiddenFieldPrefix: String = "", levelPrefix: Bool = false) {
        self.fileDescriptor = fileDescriptor
        self.hiddenFieldPrefix = hiddenFieldPrefix
        self.levelPrefix = levelPrefix
    }

    package func write(_ record: LogRecord) {
        var line = bytes(of: record, pid: CurrentProcess.id)
        line.append(UInt8(ascii: "\n"))
        // A line that cannot be written has nowhere else to go.
        try? FileDescriptor.writeAll(fileDescriptor, line)
    }

    /// The line for `record`, without the newline.
    package func format(_ record: LogRecord, pid: Int32) -> String {
        String(decoding: bytes(of: record, pid: pid), as: UTF8.self)
    }

    /// The line's bytes, without the newline (``write(_:)`` sends them as
    /// they are: no string is made of them and appended to).
    private func bytes(of record: LogRecord, pid: Int32) -> [UInt8] {
        // Written as bytes into one buffer: a line made of interpolations,
        // a mapped array and `joined` cost some 20 k instructions, and every
        // `Continue` logs one.
        var line: [UInt8] = []
        line.reserveCapacity(97 + record.message.utf8.count + 48 * record.metadata.count)
        if levelPrefix {
            line.append(UInt8(ascii: "<"))
            Self.append(String(record.level.syslogPriority), to: &line)
            line.append(UInt8(ascii: ">"))
        } else {
            Self.append(record.identifier, to: &line)
            line.append(UInt8(ascii: "["))
            Self.append(String(pid), to: &line)
            Self.append("]: ", to: &line)
            Self.append(record.level.name, to: &line)
            Self.append(": ", to: &line)
        }
        Self.appendEscaped(record.message, to: &line)
        var first = true
        for (field, text) in record.metadata {
            Self.append(first ? " (" : " ", to: &line)
            first = false
            appendDisplayName(field, to: &line)
            line.append(UInt8(ascii: "="))
            Self.appendQuoted(text, to: &line)
        }
        if !first { line.append(UInt8(ascii: ")")) }
        return line
    }

    /// `text`'s bytes, copied at once from a native string's storage (a
    /// `String.UTF8View` appended as a collection costs some 180
    /// instructions even when short).
    private static func append(_ text: String, to line: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ line.append(contentsOf: $0) }) == nil {
            line.append(contentsOf: text.utf8)
        }
    }

    func displayName(_ field: LogField) -> String {
        var bytes: [UInt8] = []
        appendDisplayName(field, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `field`'s name without ``hiddenFieldPrefix``, in lowercase. On the
    /// bytes: a journal field name is ASCII (A–Z, 0–9, `_`). Copied whole,
    /// then the prefix compared, dropped and the rest lowered in place, in
    /// one pass over the line's buffer: comparing and slicing the names as
    /// `UTF8View`s cost some 1,200 instructions a field, three a `Continue`.
    private func appendDisplayName(_ field: LogField, to line: inout [UInt8]) {
        let from = line.count
        Self.append(field.name, to: &line)
        // How many bytes to drop: the prefix's, when the name is longer.
        func hidden(_ prefix: UnsafeBufferPointer<UInt8>) -> Int {
            line.withUnsafeBufferPointer { bytes in
                guard !prefix.isEmpty, bytes.count - from > prefix.count else { return 0 }
                for i in prefix.indices where bytes[from + i] != prefix[i] { return 0 }
                return prefix.count
            }
        }
        let hidden = hiddenFieldPrefix.utf8.withContiguousStorageIfAvailable(hidden)
            ?? Array(hiddenFieldPrefix.utf8).withUnsafeBufferPointer(hidden)
        line.withUnsafeMutableBufferPointer { bytes in
            var to = from
            for i in (from + hidden)..<bytes.count {
                let byte = bytes[i]
                bytes[to] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                to += 1
            }
        }
        line.removeLast(hidden)
    }

    private static func appendEscaped(_ text: String, to line: inout [UInt8]) {
        append(isPlain(text) ? text : escape(text), to: &line)
    }

    private static func appendQuoted(_ text: String, to line: inout [UInt8]) {
        guard needsQuotes(text) else { return appendEscaped(text, to: &line) }
        append(quote(text), to: &line)
    }

    /// Printable ASCII without a backslash: nothing to escape.
    private static func isPlain(_ text: String) -> Bool {
        // A native string's bytes in place: the view's iterator cost some
        // 10 instructions a byte.
        text.utf8.withContiguousStorageIfAvailable(isPlain) ?? Array(text.utf8).withUnsafeBufferPointer(isPlain)
    }

    /// ``isPlain(_:)`` on bytes, eight at a time: a line checks its message
    /// and every value, some 400 instructions each byte by byte.
    private static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // Whether some byte of `v` is below `n` (at most 0x80) or zero: a
        // borrow can mark a byte after the first such one, never one when
        // there is none, so the answer is exact.
        func someBelow(_ v: UInt64, _ n: UInt64) -> Bool { (v &- n &* ones) & ~v & highs != 0 }
        let raw = UnsafeRawBufferPointer(bytes)
        var i = 0
        while i + 8 <= raw.count {
            let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            // Not ASCII, a control character, DEL (0x7F) or a backslash (0x5C).
            if w & highs != 0 || someBelow(w, 0x20) || someBelow(w ^ (0x7F &* ones), 1)
                || someBelow(w ^ (0x5C &* ones), 1)
            {
                return false
            }
            i += 8
        }
        while i < raw.count {
            let byte = raw[i]
            guard byte >= 0x20 && byte < 0x7F && byte != 0x5C else { return false }
            i += 1
        }
        return true
    }

    /// Empty, or holding a space, `"`, `=`, `(` or `)`. Bytes, not
    /// Characters: the five are ASCII, and UTF-8 never uses an ASCII byte
    /// inside a multi-byte sequence.
    private static func needsQuotes(_ text: String) -> Bool {
        func special(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x22 || byte == 0x3D || byte == 0x28 || byte == 0x29
        }
        return text.isEmpty
            || (text.utf8.withContiguousStorageIfAvailable { $0.contains(where: special) } ?? text.utf8.contains(where: special))
    }

    static func quote(_ text: String) -> String {
        let escaped = escape(text)
        guard needsQuotes(text) else { return escaped }
        return "\"" + escaped.replacingQuotes() + "\""
    }

    static func escape(_ text: String) -> String {
        // Most lines are printable ASCII without a backslash: nothing to
        // escape, and no per-scalar Unicode property look-up (which made
        // the log line the most expensive part of a `Continue`).
        if isPlain(text) { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            default:
                if scalar.properties.generalCategory == .control {
                    let hex = String(scalar.value, radix: 16)
                    result += scalar.value < 0x100
                        ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
                        : "\\u{\(hex)}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var result = ""
        for character in self {
            if character == "\"" { result += "\\\"" } else { result.append(character) }
        }
        return result
    }
}
