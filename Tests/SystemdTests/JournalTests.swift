import Foundation
import Glibc
import Testing

@testable import Systemd

/// Whether a journald is listening here. On build machines PID 1 is usually
/// not systemd and there is none; the end-to-end suite under real systemd
/// covers the journal for real, and these tests check the encoding.
let journaldIsRunning = FileManager.default.fileExists(atPath: "/run/systemd/journal/socket")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/journalctl")

@Suite("JournalBackend")
struct JournalTests {
    func text(_ fields: [[UInt8]]) -> [String] {
        fields.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func buildsTheStructuredFields() {
        let record = LogRecord(
            level: .error, message: "submit failed:\nconnection refused", messageID: .submitFailed,
            metadata: [.session: "0f3a", .flow: "consultation", LogField(normalizing: "attempt"): 2],
            identifier: "flowd", file: "FlowDaemon/Session.swift", function: "submit()", line: 42)
        let fields = text(JournalBackend.fields(for: record))
        #expect(fields == [
            "MESSAGE=submit failed:\nconnection refused",
            "PRIORITY=3",
            "SYSLOG_IDENTIFIER=flowd",
            "MESSAGE_ID=3550d87f29a447688ec07bdacf7f7164",
            "CODE_FILE=FlowDaemon/Session.swift",
            "CODE_LINE=42",
            "CODE_FUNC=submit()",
            "FLOWD_SESSION=0f3a",
            "FLOWD_FLOW=consultation",
            "ATTEMPT=2",
        ])
    }

    @Test func everyFieldNameIsValidAndNoneIsReservedTwice() {
        let record = LogRecord(
            level: .debug, message: "m",
            metadata: [LogField(normalizing: "message"): "spoof", LogField(normalizing: "priority"): "0", .errno: 2],
            identifier: "flowd", file: "f", function: "g", line: 1)
        let fields = text(JournalBackend.fields(for: record))
        #expect(!fields.contains { $0.hasPrefix("MESSAGE_ID=") })
        let names = fields.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) }
        #expect(names.count == fields.count)
        for name in names { #expect(LogField.isValid(name), "\(name)") }
        #expect(names.filter { $0 == "MESSAGE" }.count == 1)
        #expect(names.filter { $0 == "PRIORITY" }.count == 1)
        #expect(fields.contains("FLOWD_MESSAGE=spoof") && fields.contains("FLOWD_PRIORITY=0") && fields.contains("ERRNO=2"))
        #expect(fields.contains("PRIORITY=7"))
    }

    @Test func malformedFieldsAreRefusedByLibsystemd() {
        let error = #expect(throws: SystemdError.self) {
            try JournalBackend.send([Array("MESSAGE=x".utf8), Array("NO_EQUALS_SIGN".utf8)])
        }
        #expect(error == .journalFailed(errno: EINVAL))
        #expect(error?.message.hasPrefix("cannot write to the journal") == true)
        #expect(throws: SystemdError.journalFailed(errno: EINVAL)) { try JournalBackend.send([Array("=value".utf8)]) }
    }

    @Test func aFailedSendFallsBackToStderr() throws {
        let pipe = try Pipe()
        let backend = JournalBackend(fallback: StderrBackend(fileDescriptor: pipe.writeEnd))
        let record = LogRecord(
            level: .notice, message: "kept", metadata: [.plugin: "p"], identifier: "flowd", file: "f", function: "g",
            line: 1)
        var sent: [[UInt8]] = []
        backend.write(record) { fields throws(SystemdError) in
            sent = fields
            throw .journalFailed(errno: EAGAIN)
        }
        #expect(sent == JournalBackend.fields(for: record))
        #expect(pipe.readAvailable() == "flowd[\(getpid())]: notice: kept (plugin=p)\n")
        // A successful send does not touch the fallback.
        backend.write(record) { _ throws(SystemdError) in }
        #expect(pipe.readAvailable() == "")
        // Without a fallback a failed entry is dropped quietly.
        JournalBackend(fallback: nil).write(record) { _ throws(SystemdError) in throw .journalFailed(errno: EAGAIN) }
    }

    @Test(.enabled(if: journaldIsRunning, "no journald on this machine"))
    func entryReadsBackFromJournalctl() async throws {
        let marker = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let logger = Logger(identifier: "flowd-test", backend: JournalBackend(fallback: nil)).with(LogField(normalizing: "FLOWD_TEST"), marker)
        logger.warning("journal round trip", id: .daemonStarted, metadata: [.session: "s-\(marker)"])

        var entry: [String: Any]?
        let deadline = ContinuousClock.now + .seconds(30)
        while entry == nil && ContinuousClock.now < deadline {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
            process.arguments = ["--no-pager", "-o", "json", "FLOWD_TEST=\(marker)"]
            let output = Foundation.Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            if let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first {
                entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            } else {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let found = try #require(entry, "the entry did not reach journalctl")
        #expect(found["MESSAGE"] as? String == "journal round trip")
        #expect(found["PRIORITY"] as? String == "4")
        #expect(found["MESSAGE_ID"] as? String == MessageID.daemonStarted.rawValue)
        #expect(found["SYSLOG_IDENTIFIER"] as? String == "flowd-test")
        #expect(found["FLOWD_SESSION"] as? String == "s-\(marker)")
        #expect((found["CODE_FILE"] as? String)?.hasSuffix("JournalTests.swift") == true)
        #expect(found["CODE_FUNC"] as? String == "entryReadsBackFromJournalctl()")
    }
}
