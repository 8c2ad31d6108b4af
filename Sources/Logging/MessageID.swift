/// A journal `MESSAGE_ID=`: 128 bits as 32 lowercase hex characters, the
/// same for every entry about one kind of event, so administrators can
/// filter with `journalctl MESSAGE_ID=…` and catalogs can attach help text.
///
/// An application generates its ids once (from `/proc/sys/kernel/random/uuid`)
/// and keeps them forever, declared as constants:
///
///     extension MessageID { static let started = MessageID(constant: "8f5ff471507e4dcda52d69e21fadea88") }
package struct MessageID: Hashable, Sendable, CustomStringConvertible {
    /// The 32 lowercase hex characters.
    package let rawValue: String

    /// `text` if it is 32 lowercase hex characters, else nil.
    package init?(_ text: String) {
        guard Self.isValid(text) else { return nil }
        rawValue = text
    }

    /// An id written in the source, checked once: a malformed one is a
    /// programming error and stops the process.
    package init(constant text: StaticString) {
        let value = text.description
        precondition(Self.isValid(value), "invalid message id \(value)")
        rawValue = value
    }

    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 32
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    package var description: String { rawValue }
}
