import Foundation
import Logging
import Testing
import TestSupport

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
            metadata: [.session: "0f3a", .flow: "consultation", LogField(normalizing: "attempt", prefix: "FLOWD_"): 2],
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
            metadata: [LogField(normalizing: "message", prefix: "FLOWD_"): "spoof", LogField(normalizing: "priority", prefix: "FLOWD_"): "0", .errno: 2],
            identifier: "flowd", file: "f", function: "g", line: 1)
        let fields = text(JournalBackend.fields(for: record))
        #expect(!fields.contains { $0.hasPrefix("MESSAGE_ID=") })
        let names = fields.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) }
        #expect(names.count == fields.count)
        for name in names where !LogField.reservedNames.contains(name) { #expect(LogField(validating: name) != nil, "\(name)") }
        #expect(names.filter { $0 == "MESSAGE" }.count == 1)
        #expect(names.filter { $0 == "PRIORITY" }.count == 1)
        #expect(fields.contains("FLOWD_MESSAGE=spoof") && fields.contains("FLOWD_PRIORITY=0") && fields.contains("ERRNO=2"))
        #expect(fields.contains("PRIORITY=7"))
    }

    @Test func malformedFieldsAreRefusedByLibsystemd() {
        let error = #expect(throws: SystemdError.self) {
            try JournalBackend.send([Array("MESSAGE=x".utf8), Array("NO_EQUALS_SIGN".utf8)])
        }
        #expect(error == .journalFailed(.invalidArgument))
        #expect(error?.message.hasPrefix("cannot write to the journal") == true)
        #expect(throws: SystemdError.journalFailed(.invalidArgument)) { try JournalBackend.send([Array("=value".utf8)]) }
    }

    @Test func aFailedSendFallsBackToStderr() throws {
        let pipe = try CapturePipe()
        let backend = JournalBackend(fallback: StderrBackend(fileDescriptor: pipe.writeEnd.rawValue, hiddenFieldPrefix: "FLOWD_"))
        let record = LogRecord(
            level: .notice, message: "kept", metadata: [.plugin: "p"], identifier: "flowd", file: "f", function: "g",
            line: 1)
        var sent: [[UInt8]] = []
        backend.write(record) { fields throws(SystemdError) in
            sent = fields
            throw .journalFailed(.wouldBlock)
        }
        #expect(sent == JournalBackend.fields(for: record))
        #expect(pipe.readAvailable() == "flowd[\(CurrentProcess.id)]: notice: kept (plugin=p)\n")
        // A successful send does not touch the fallback.
        backend.write(record) { _ throws(SystemdError) in }
        #expect(pipe.readAvailable() == "")
        // Without a fallback a failed entry is dropped quietly.
        JournalBackend(fallback: nil).write(record) { _ throws(SystemdError) in throw .journalFailed(.wouldBlock) }
    }

    @Test(.enabled(if: journaldIsRunning, "no journald on this machine"))
    func entryReadsBackFromJournalctl() async throws {
        let marker = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let logger = Logger(identifier: "flowd-test", backend: JournalBackend(fallback: nil)).with(LogField(constant: "FLOWD_TEST"), marker)
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

    @Test func journalStreamMustMatchStderr() throws {
        let stream = (device: UInt64(64769), inode: UInt64(123_456))
        #expect(JournalStream.stderrIsJournal(environment: "64769:123456", stderr: stream))
        #expect(!JournalStream.stderrIsJournal(environment: "64769:123457", stderr: stream))
        #expect(!JournalStream.stderrIsJournal(environment: "1:123456", stderr: stream))
        #expect(!JournalStream.stderrIsJournal(environment: nil, stderr: stream))
        #expect(!JournalStream.stderrIsJournal(environment: "64769:123456", stderr: nil))
        for malformed in ["", "64769", "64769:", ":123456", "a:b", "64769:123456:1", "-1:5"] {
            #expect(!JournalStream.stderrIsJournal(environment: malformed, stderr: stream), "\(malformed)")
        }
        // The real descriptor: the automatic choice agrees with the check on this process.
        let actual = (try? FileDescriptor.status(of: 2)).map { ($0.identity.device, $0.identity.inode) }
        let expectJournal = JournalStream.stderrIsJournal(
            environment: ProcessInfo.processInfo.environment["JOURNAL_STREAM"], stderr: actual)
        #expect((JournalBackend.automatic() is JournalBackend) == expectJournal)
        #expect((JournalBackend.automatic() is StderrBackend) == !expectJournal)
        if let actual {
            #expect(JournalStream.stderrIsJournal(environment: "\(actual.0):\(actual.1)", stderr: actual))
        }
    }

    /// The journal stream of a service, played by a socket pair: `service` is
    /// the service's stderr, `journald` the end journald reads.
    func journalStream() throws -> (service: FileDescriptor, journald: FileDescriptor, name: String) {
        let (service, journald) = try FileDescriptor.socketPair()
        let identity = try service.status().identity
        return (service, journald, "\(identity.device):\(identity.inode)")
    }

    @Test func attachUnitWritesOneEmptyLineToTheJournalStreamOnly() throws {
        let stream = try journalStream()
        #expect(JournalStream.attachUnit(stderr: stream.service.rawValue, journalStream: stream.name))
        try stream.journald.setNonBlocking()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try stream.journald.read(into: &buffer) == 1)
        #expect(buffer[0] == UInt8(ascii: "\n"))
        // Not the journal (no $JOURNAL_STREAM, or another stream's): nothing written.
        #expect(!JournalStream.attachUnit(stderr: stream.service.rawValue, journalStream: nil))
        #expect(!JournalStream.attachUnit(stderr: stream.service.rawValue, journalStream: "1:2"))
        #expect(throws: SystemCallError.self) { try stream.journald.read(into: &buffer) }
    }

    @Test func waitUntilReadReturnsOnceTheReaderHasReadAll() throws {
        let stream = try journalStream()
        #expect(JournalStream.waitUntilRead(stderr: stream.service.rawValue, timeout: .zero), "nothing written yet")
        try stream.service.writeAll(Array("<3>cannot open the session database\n".utf8))
        #expect(try FileDescriptor.unreadByPeer(stream.service.rawValue) > 0)
        // A reader that does not read: the wait gives up.
        #expect(!JournalStream.waitUntilRead(stderr: stream.service.rawValue, timeout: .milliseconds(20)))
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(try stream.journald.read(into: &buffer) == 36)
        #expect(JournalStream.waitUntilRead(stderr: stream.service.rawValue, timeout: .seconds(60)))
        // A pipe or a file is no stream journald reads: nothing to wait for.
        let pipe = try FileDescriptor.pipe()
        try pipe.write.writeAll([1, 2, 3])
        #expect(throws: SystemCallError.self) { try FileDescriptor.unreadByPeer(pipe.write.rawValue) }
        #expect(JournalStream.waitUntilRead(stderr: pipe.write.rawValue, timeout: .seconds(60)))
    }
}
