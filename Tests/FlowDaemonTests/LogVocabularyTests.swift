import FlowDaemon
import Foundation
import Logging
import Testing

/// flowd's own words in the journal (FlowDaemon/Logging/FlowdLog.swift):
/// fixed forever, so administrators' `journalctl MESSAGE_ID=…` filters keep
/// working.
@Suite("flowd's message ids and journal fields")
struct LogVocabularyTests {
    @Test func messageIDsAreValidDistinctAndUnchanged() {
        #expect(MessageID.flowd.count == 14)
        #expect(Set(MessageID.flowd).count == MessageID.flowd.count)
        for id in MessageID.flowd {
            #expect(MessageID(id.rawValue) == id)
        }
        // The ids docs/admin.md lists; changing one breaks filters in the field.
        #expect(MessageID.sessionStarted.rawValue == "995f4e09ab32461ebef85cbb74068c45")
        #expect(MessageID.daemonStopping.rawValue == "638b11f959d541dca7e58482982738a7")
        #expect(MessageID.administrativeAccess.rawValue == "bfd73dc32cdf4e0e9507311e6d4d8a15")
        #expect(MessageID.authorizationRefused.rawValue == "a85c241363b84631afb4644fae70f904")
    }

    /// data/catalog/flowd.catalog (installed to /usr/lib/systemd/catalog/)
    /// explains every id, once, for `journalctl -x`.
    @Test func theJournalCatalogExplainsEveryID() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: repository.appendingPathComponent("data/catalog/flowd.catalog"), encoding: .utf8)
        let headers = text.split(separator: "\n").filter { $0.hasPrefix("-- ") }.map { String($0.dropFirst(3)) }
        #expect(headers.sorted() == MessageID.flowd.map(\.rawValue).sorted())
        for entry in text.components(separatedBy: "\n-- ").dropFirst() {
            #expect(entry.contains("\nSubject: "), "every entry has a subject: \(entry.prefix(40))")
            #expect(entry.contains("\nDefined-By: flowd\n"))
        }
    }

    @Test func fieldsAreValidJournalNamesInFlowdsNamespace() {
        #expect(LogField.flowd.count == 11)
        #expect(Set(LogField.flowd).count == LogField.flowd.count)
        for field in LogField.flowd {
            #expect(LogField(validating: field.name) == field, "\(field) must itself be valid")
            #expect(field.name.hasPrefix("FLOWD_"))
        }
    }
}
