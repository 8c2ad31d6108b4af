import Foundation
import Glibc
import Testing

@testable import Systemd

@Suite("Logger, levels, fields and message ids")
struct LoggingTests {
    @Test func levelsMapOntoSyslogPriorities() {
        #expect(LogLevel.allCases.map(\.syslogPriority).sorted() == [2, 3, 4, 5, 6, 7])
        #expect(LogLevel.debug.syslogPriority == 7)
        #expect(LogLevel.critical.syslogPriority == 2)
        #expect(LogLevel.debug < .info && LogLevel.info < .notice && LogLevel.error < .critical)
        #expect(LogLevel(name: "WARN") == .warning)
        #expect(LogLevel(name: "crit") == .critical)
        #expect(LogLevel(name: "verbose") == nil)
        for level in LogLevel.allCases { #expect(LogLevel(name: level.name) == level) }
    }

    @Test func fieldNamesFollowTheJournalRules() {
        #expect(LogField(validating: "FLOWD_SESSION") == .session)
        for bad in ["", "lower", "_TRUSTED", "1ST", "WITH-DASH", "SPACE X", String(repeating: "A", count: 65), "MESSAGE",
                    "PRIORITY", "CODE_FILE", "ÜBER"] {
            #expect(LogField(validating: bad) == nil, "\(bad) must be refused")
        }
        #expect(LogField(validating: String(repeating: "A", count: 64)) != nil)
        #expect(LogField(normalizing: "session-id").name == "SESSION_ID")
        #expect(LogField(normalizing: "__private").name == "PRIVATE")
        #expect(LogField(normalizing: "9lives").name == "FLOWD_9LIVES")
        #expect(LogField(normalizing: "message").name == "FLOWD_MESSAGE")
        #expect(LogField(normalizing: "").name == "FIELD")
        #expect(LogField(normalizing: "___").name == "FIELD")
        #expect(LogField(normalizing: "größe").name == "GR__E")
        #expect(LogField(normalizing: String(repeating: "x", count: 100)).name.count == 64)
        for field in [LogField.session, .flow, .plugin, .step, .field, .state, .uid, .sender, .path, .error,
                      .durationMicroseconds, .errno] {
            #expect(LogField(validating: field.name) == field, "\(field) must itself be valid")
            #expect(LogField(normalizing: "x \(field.name)").name.count <= 64)
        }
    }

    @Test func messageIDsAreValidAndDistinct() {
        #expect(MessageID.all.count == 9)
        #expect(Set(MessageID.all).count == MessageID.all.count)
        for id in MessageID.all {
            #expect(MessageID(id.rawValue) == id)
        }
        #expect(MessageID("995F4E09AB32461EBEF85CBB74068C45") == nil)  // uppercase
        #expect(MessageID("995f4e09-ab32-461e-bef8-5cbb74068c45") == nil)
        #expect(MessageID("995f4e09ab32461ebef85cbb74068c4") == nil)
        #expect(MessageID("zz5f4e09ab32461ebef85cbb74068c45") == nil)
    }

    @Test func messagesInterpolateLogValues() {
        let uid: UInt32 = 1000
        let session = "0f3a"
        let message: LogMessage = "session \(session) of uid \(uid) took \(Duration.milliseconds(12)), root \(false)"
        #expect(message.text == "session 0f3a of uid 1000 took 0.012 seconds, root false")
    }

    @Test func metadataKeepsOrderAndReplaces() {
        var metadata: LogMetadata = [.session: "s1", .uid: UInt32(1000)]
        metadata[.flow] = "consultation"
        metadata[.session] = "s2"
        #expect(metadata.map(\.field) == [.session, .uid, .flow])
        #expect(metadata.text(of: .session) == "s2")
        metadata[.uid] = nil
        #expect(metadata.count == 2)
        let merged = metadata.merging([.flow: "other", .plugin: "p"])
        #expect(merged.map(\.text) == ["s2", "other", "p"])
        #expect(LogMetadata().isEmpty)
    }

    @Test func loggerFiltersByLevelWithoutBuildingTheMessage() {
        let backend = CapturingBackend()
        var logger = Logger(identifier: "flowd", minimumLevel: .notice, backend: backend)
        logger.metadata[.plugin] = "example.vat"
        var built = 0
        func expensive() -> String {
            built += 1
            return "built"
        }
        logger.info("not written: \(expensive())")
        logger.debug("not written either")
        #expect(built == 0)
        logger.warning("written: \(expensive())", id: .pluginRefused, metadata: [.session: "s1"])
        logger.critical("also written")
        #expect(built == 1)
        let records = backend.records
        #expect(records.map(\.level) == [.warning, .critical])
        let first = records[0]
        #expect(first.message == "written: built")
        #expect(first.messageID == .pluginRefused)
        #expect(first.identifier == "flowd")
        #expect(first.metadata.map(\.field) == [.plugin, .session])
        #expect(first.file.hasSuffix("LoggingTests.swift"))
        #expect(first.function == "loggerFiltersByLevelWithoutBuildingTheMessage()")
        #expect(first.line > 0)
        #expect(logger.isEnabled(.error) && !logger.isEnabled(.info))
    }

    @Test func childLoggersCarryTheirFields() {
        let backend = CapturingBackend()
        let root = Logger(identifier: "flowd", minimumLevel: .debug, backend: backend)
        let session = root.with(.session, "abc").with(.flow, "enrol")
        session.debug("step shown", metadata: [.step: "account", .flow: "override"])
        root.info("no fields")
        #expect(backend.records[0].metadata.map(\.text) == ["abc", "override", "account"])
        #expect(backend.records[1].metadata.isEmpty)
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
        // The real descriptor: automaticBackend agrees with the check on this process.
        let actual = LibSystemd.deviceAndInode(of: 2)
        let expectJournal = JournalStream.stderrIsJournal(
            environment: ProcessInfo.processInfo.environment["JOURNAL_STREAM"], stderr: actual)
        #expect((Logger.automaticBackend() is JournalBackend) == expectJournal)
        #expect((Logger.automaticBackend() is StderrBackend) == !expectJournal)
        if let actual {
            #expect(JournalStream.stderrIsJournal(environment: "\(actual.device):\(actual.inode)", stderr: actual))
        }
    }
}

@Suite("StderrBackend")
struct StderrBackendTests {
    func record(_ message: String, metadata: LogMetadata = [:], level: LogLevel = .warning) -> LogRecord {
        LogRecord(
            level: level, message: message, messageID: .submitFailed, metadata: metadata, identifier: "flowd",
            file: "FlowDaemon/Session.swift", function: "submit()", line: 42)
    }

    @Test func formatsOnePlainLine() {
        let line = StderrBackend.format(
            record("plugin call timed out", metadata: [.session: "0f3a", .plugin: "example.vat", .uid: 1000]),
            pid: 4242)
        #expect(line == "flowd[4242]: warning: plugin call timed out (session=0f3a plugin=example.vat uid=1000)")
        #expect(StderrBackend.format(record("ready", level: .info), pid: 1) == "flowd[1]: info: ready")
    }

    @Test func escapesAndQuotesSoEveryEntryIsOneLine() {
        let line = StderrBackend.format(
            record("two\nlines\tand \u{1b}[31mcolour\\", metadata: [
                .error: "with space", .path: "", .flow: "a=b", .step: "say \"hi\"", LogField(normalizing: "custom"): "x\ny",
            ]), pid: 7)
        #expect(!line.contains("\n"))
        #expect(line == #"flowd[7]: warning: two\nlines\tand \x1b[31mcolour\\ (error="with space" path="" flow="a=b" step="say \"hi\"" custom=x\ny)"#)
    }

    @Test func escapingTreatsTheEdgesOfPrintableASCIIRight() {
        // The printable-ASCII shortcut against the characters just outside it.
        #expect(StderrBackend.escape("plain ~ text !") == "plain ~ text !")
        #expect(StderrBackend.escape("del\u{7f}") == #"del\x7f"#)
        #expect(StderrBackend.escape("c1\u{85}") == #"c1\x85"#)
        #expect(StderrBackend.escape("back\\slash") == #"back\\slash"#)
        #expect(StderrBackend.escape("unit\u{1f}sep") == #"unit\x1fsep"#)
        #expect(StderrBackend.escape("café 日本") == "café 日本")
        #expect(StderrBackend.quote("naïve (x)") == "\"naïve (x)\"")
        #expect(StderrBackend.quote("naïve") == "naïve")
    }

    @Test func writesWholeLinesToItsDescriptor() throws {
        let pipe = try Pipe()
        let logger = Logger(identifier: "flowd-test", backend: StderrBackend(fileDescriptor: pipe.writeEnd))
        logger.error("first", metadata: [.session: "s"])
        logger.info("second")
        logger.debug("dropped")
        let pid = getpid()
        #expect(pipe.readAvailable() == "flowd-test[\(pid)]: error: first (session=s)\nflowd-test[\(pid)]: info: second\n")
    }
}
