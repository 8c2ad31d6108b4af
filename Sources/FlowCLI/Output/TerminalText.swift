import DBus
import FlowClient
import FlowEngine
import FlowKit
import FlowProtocol

/// Text from flowd or a plugin made safe to show on a terminal.
///
/// A flow file, a validator, an options provider or a submit action can put
/// anything in a string: escape sequences that clear the screen, set the
/// window title, move the cursor or ring the bell, a carriage return that
/// writes over a line, or a megabyte of text. None of that reaches the
/// terminal: ``clean(_:limit:)`` keeps printable text, newlines and tabs,
/// and at most ``limit`` characters.
///
/// It is applied in one place, ``FlowdCalls``, to every reply flowctl is
/// going to show a person (``TerminalSafe``); `--json` output keeps the
/// texts whole, and its serializer escapes every control character.
package enum TerminalText {
    /// The most characters one text keeps for the terminal.
    package static let limit = 4000

    /// `text` without control characters and escape sequences, cut to
    /// `limit` characters with "…" when longer.
    ///
    /// Removed: C0 controls except newline and tab, DEL, C1 controls, and
    /// whole escape sequences: CSI (`ESC [` … final byte, and the 8-bit
    /// CSI), OSC, DCS, SOS, PM and APC (up to their terminator, BEL or
    /// `ESC \`), and any other `ESC` with the character after it.
    package static func clean(_ text: String, limit: Int = limit) -> String {
        // Most texts are plain: keep them as they are, without copying.
        if text.utf8.count <= limit, text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x0A || $0 == 0x09 }),
           !text.unicodeScalars.contains(where: isC1) {
            return text
        }
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        // A character read while skipping a sequence cut short, to keep.
        var pending: Unicode.Scalar?
        while true {
            let scalar: Unicode.Scalar
            if let kept = pending {
                scalar = kept
                pending = nil
            } else if let read = scalars.next() {
                scalar = read
            } else {
                break
            }
            switch scalar.value {
            case 0x1B:
                skipEscape(after: &scalars, pending: &pending)
            case 0x9B:
                skipControlSequence(&scalars, pending: &pending)
            case 0x90, 0x98, 0x9D, 0x9E, 0x9F:
                skipString(&scalars, pending: &pending)
            case 0x0A, 0x09:
                out.append(scalar)
            case 0..<0x20, 0x7F, 0x80..<0xA0:
                continue
            default:
                out.append(scalar)
            }
        }
        let cleaned = String(out)
        guard cleaned.count > limit else { return cleaned }
        return String(cleaned.prefix(max(limit - 1, 0))) + "…"
    }

    private static func isC1(_ scalar: Unicode.Scalar) -> Bool { (0x80..<0xA0).contains(scalar.value) }

    /// After `ESC`: a CSI, a string sequence (OSC, DCS, SOS, PM, APC) or a two-character one.
    private static func skipEscape(after scalars: inout String.UnicodeScalarView.Iterator, pending: inout Unicode.Scalar?) {
        guard let kind = scalars.next() else { return }
        switch kind {
        case "[": skipControlSequence(&scalars, pending: &pending)
        case "]", "P", "X", "^", "_": skipString(&scalars, pending: &pending)
        default:
            // `ESC ( B` and the like take one more character after an intermediate.
            if (0x20...0x2F).contains(kind.value) { _ = scalars.next() }
        }
    }

    /// A CSI's parameters and intermediates up to its final character (`@` to `~`).
    private static func skipControlSequence(_ scalars: inout String.UnicodeScalarView.Iterator, pending: inout Unicode.Scalar?) {
        while let scalar = scalars.next() {
            if (0x40...0x7E).contains(scalar.value) { return }
            // Not part of a sequence: the sequence was cut short; keep what follows.
            if !(0x20...0x3F).contains(scalar.value) {
                pending = scalar
                return
            }
        }
    }

    /// A string sequence up to BEL, `ESC \` or the 8-bit ST.
    private static func skipString(_ scalars: inout String.UnicodeScalarView.Iterator, pending: inout Unicode.Scalar?) {
        while let scalar = scalars.next() {
            switch scalar.value {
            case 0x07, 0x9C: return
            case 0x1B:
                if let after = scalars.next(), after != "\\" { pending = after }
                return
            default: continue
            }
        }
    }
}

/// A reply from flowd whose texts can be made safe for a terminal
/// (``TerminalText/clean(_:limit:)``): every string in it, ids included.
package protocol TerminalSafe {
    /// A copy with every text cleaned; fails only when the cleaned reply no
    /// longer decodes (it never shows uncleaned text instead).
    func terminalSafe() throws(WireError) -> Self
}

/// A wire struct cleaned through its own codec: every string it puts on the
/// bus is cleaned and the result decoded again, so a key the contract gains
/// later is cleaned without a line here.
protocol CleanedThroughWire: TerminalSafe {
    var dbusValue: DBusValue { get }
    init(dbusValue: DBusValue) throws(WireError)
}

extension CleanedThroughWire {
    package func terminalSafe() throws(WireError) -> Self { try Self(dbusValue: dbusValue.terminalSafe()) }
}

extension StepPage: CleanedThroughWire {}
extension FlowSummary: CleanedThroughWire {}
extension PluginSummary: CleanedThroughWire {}
extension DaemonStatus: CleanedThroughWire {}

extension ReviewPage: TerminalSafe {
    package func terminalSafe() throws(WireError) -> ReviewPage {
        try ReviewPage(dbusArguments: dbusArguments.map { $0.terminalSafe() })
    }
}

extension SessionProperties: TerminalSafe {
    package func terminalSafe() throws(WireError) -> SessionProperties {
        var values: [String: DBusValue] = [:]
        for property in SessionProperty.allCases { values[property.rawValue] = value(of: property).terminalSafe() }
        return try SessionProperties(dbus: values)
    }
}

extension SessionListing: TerminalSafe {
    // Its id and flow id are checked by the decoder against the session's path.
    package func terminalSafe() -> SessionListing { self }
}

extension String: TerminalSafe {
    package func terminalSafe() -> String { TerminalText.clean(self) }
}

extension Bool: TerminalSafe {
    package func terminalSafe() -> Bool { self }
}

extension Array: TerminalSafe where Element: TerminalSafe {
    package func terminalSafe() throws(WireError) -> [Element] {
        try map { (element) throws(WireError) in try element.terminalSafe() }
    }
}

extension Dictionary: TerminalSafe where Key == String, Value: TerminalSafe {
    package func terminalSafe() throws(WireError) -> [String: Value] {
        var safe: [String: Value] = [:]
        for (key, value) in self { safe[key.terminalSafe()] = try value.terminalSafe() }
        return safe
    }
}

extension Dictionary where Key == String, Value == DBusValue {
    /// Answers and receipts cleaned, keys included; no reply to decode again.
    package func terminalSafe() -> [String: DBusValue] {
        var safe: [String: DBusValue] = [:]
        for (key, value) in self { safe[key.terminalSafe()] = value.terminalSafe() }
        return safe
    }
}

extension DBusValue: TerminalSafe {
    /// The value with every string in it cleaned, dictionary keys included.
    package func terminalSafe() -> DBusValue {
        switch self {
        case .string(let s): return .string(s.terminalSafe())
        case .array(let type, let items): return .array(elementType: type, items.map { $0.terminalSafe() })
        case .dictionary(let keyType, let valueType, let entries):
            return .dictionary(
                keyType: keyType, valueType: valueType,
                entries.map { DBusDictEntry(key: $0.key.terminalSafe(), value: $0.value.terminalSafe()) })
        case .structure(let fields): return .structure(fields.map { $0.terminalSafe() })
        case .variant(let inner): return .variant(inner.terminalSafe())
        default: return self
        }
    }
}

extension FlowEvent {
    /// The event with every text in it cleaned.
    package func terminalSafe() -> FlowEvent {
        switch self {
        case .propertiesChanged(let id, let changed):
            return .propertiesChanged(session: id, changed.mapValues { $0.terminalSafe() })
        case .session(let id, .stepCompleted(let step, let answers)):
            return .session(id, .stepCompleted(step: step.terminalSafe(), answers: answers.terminalSafe()))
        case .session(let id, .submitted(let receipt)):
            return .session(id, .submitted(receipt: receipt.terminalSafe()))
        case .session(let id, .submitFailed(let message)):
            return .session(id, .submitFailed(message: message.terminalSafe()))
        case .session(let id, .announcement(let text)):
            return .session(id, .announcement(text: text.terminalSafe()))
        case .manager, .sessionCount, .serviceLost, .reconnected:
            return self
        }
    }
}

extension FlowClientError {
    /// The error with its message safe for a terminal.
    package func terminalSafe() -> FlowClientError {
        var error = self
        error.message = message.terminalSafe()
        return error
    }
}
