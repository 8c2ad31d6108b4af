import Testing
import TestSupport

@testable import Logging

/// An application's own words, as an application declares them.
extension LogField {
    static let session = LogField(constant: "APP_SESSION")
    static let flow = LogField(constant: "APP_FLOW")
    static let plugin = LogField(constant: "APP_PLUGIN")
    static let step = LogField(constant: "APP_STEP")
    static let uid = LogField(constant: "APP_UID")
    static let path = LogField(constant: "APP_PATH")
    static let error = LogField(constant: "APP_ERROR")
}

extension MessageID {
    static let refused = MessageID(constant: "2948f21f9e3f47b7a6cdad4ba6fd94fe")
    static let failed = MessageID(constant: "3550d87f29a447688ec07bdacf7f7164")
}

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
        #expect(LogField(validating: "APP_SESSION") == .session)
        for bad in ["", "lower", "_TRUSTED", "1ST", "WITH-DASH", "SPACE X", String(repeating: "A", count: 65), "MESSAGE",
                    "PRIORITY", "CODE_FILE", "ÜBER"] {
            #expect(LogField(validating: bad) == nil, "\(bad) must be refused")
        }
        #expect(LogField(validating: String(repeating: "A", count: 64)) != nil)
        #expect(LogField(normalizing: "session-id", prefix: "APP_").name == "SESSION_ID")
        #expect(LogField(normalizing: "__private", prefix: "APP_").name == "PRIVATE")
        #expect(LogField(normalizing: "9lives", prefix: "APP_").name == "APP_9LIVES")
        #expect(LogField(normalizing: "message", prefix: "APP_").name == "APP_MESSAGE")
        #expect(LogField(normalizing: "", prefix: "APP_").name == "FIELD")
        #expect(LogField(normalizing: "___", prefix: "APP_").name == "FIELD")
        #expect(LogField(normalizing: "größe", prefix: "APP_").name == "GR__E")
        #expect(LogField(normalizing: String(repeating: "x", count: 100), prefix: "APP_").name.count == 64)
        for field in [LogField.session, .flow, .plugin, .step, .uid, .path, .error, .errno] {
            #expect(LogField(validating: field.name) == field, "\(field) must itself be valid")
            #expect(LogField(normalizing: "x \(field.name)", prefix: "APP_").name.count <= 64)
        }
    }

    @Test func messageIDsAreThirtyTwoLowercaseHexDigits() {
        #expect(MessageID(MessageID.refused.rawValue) == .refused)
        #expect(MessageID.refused != MessageID.failed)
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

    @Test func metadataFromTextsIsTheLiteralsMetadata() {
        let texts = LogMetadata(texts: [(.session, "s1"), (.flow, "f"), (.step, "a")])
        #expect(texts == [.session: "s1", .flow: "f", .step: "a"])
        // A field given twice keeps its last text in its first place, as
        // setting it again does.
        let twice = LogMetadata(texts: [(.session, "s1"), (.flow, "f"), (.session, "s2"), (.flow, "g")])
        #expect(twice.map(\.field) == [.session, .flow])
        #expect(twice.map(\.text) == ["s2", "g"])
        #expect(LogMetadata(texts: []).isEmpty)
        #expect(LogMetadata(texts: [(.uid, "1")]).map(\.text) == ["1"])
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
        logger.warning("written: \(expensive())", id: .refused, metadata: [.session: "s1"])
        logger.critical("also written")
        #expect(built == 1)
        let records = backend.records
        #expect(backend.messages == ["written: built", "also written"])
        #expect(records.map(\.level) == [.warning, .critical])
        let first = records[0]
        #expect(first.message == "written: built")
        #expect(first.messageID == .refused)
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
}

@Suite("StderrBackend")
struct StderrBackendTests {
    func record(_ message: String, metadata: LogMetadata = [:], level: LogLevel = .warning) -> LogRecord {
        LogRecord(
            level: level, message: message, messageID: .failed, metadata: metadata, identifier: "flowd",
            file: "FlowDaemon/Session.swift", function: "submit()", line: 42)
    }

    @Test func formatsOnePlainLine() {
        let line = StderrBackend(hiddenFieldPrefix: "APP_").format(
            record("plugin call timed out", metadata: [.session: "0f3a", .plugin: "example.vat", .uid: 1000]),
            pid: 4242)
        #expect(line == "flowd[4242]: warning: plugin call timed out (session=0f3a plugin=example.vat uid=1000)")
        #expect(StderrBackend(hiddenFieldPrefix: "APP_").format(record("ready", level: .info), pid: 1) == "flowd[1]: info: ready")
    }

    @Test func fieldNamesLoseOnlyTheHiddenPrefixAndAreLowercased() throws {
        let backend = StderrBackend(hiddenFieldPrefix: "APP_")
        let names = ["APP_SESSION_2", "APPX", "APP", "MY_APP_FIELD", "Z9_AZ", "APP_APP_", "APP_", "APQ_X", "APP_X"]
        let fields = try names.map { name in try #require(LogField(validating: name), "\(name)") }
        #expect(fields.map(backend.displayName) == [
            "session_2", "appx", "app", "my_app_field", "z9_az", "app_", "app_", "apq_x", "x",
        ])
        #expect(StderrBackend().displayName(fields[0]) == "app_session_2")
    }

    @Test func aLevelPrefixLeavesTheRestToTheJournal() {
        let backend = StderrBackend(hiddenFieldPrefix: "APP_", levelPrefix: true)
        #expect(backend.format(record("cannot open the session database", level: .error), pid: 9)
            == "<3>cannot open the session database")
        #expect(backend.format(record("x\ny", metadata: [.session: "0f3a"], level: .critical), pid: 9) == "<2>x\\ny (session=0f3a)")
        #expect(backend.format(record("stopped", level: .info), pid: 9) == "<6>stopped")
    }

    @Test func escapesAndQuotesSoEveryEntryIsOneLine() {
        let line = StderrBackend(hiddenFieldPrefix: "APP_").format(
            record("two\nlines\tand \u{1b}[31mcolour\\", metadata: [
                .error: "with space", .path: "", .flow: "a=b", .step: "say \"hi\"", LogField(normalizing: "custom", prefix: "APP_"): "x\ny",
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

    @Test func escapingFindsEveryCharacterAtEveryPlace() {
        // Each ASCII character, and two that are not, at every place of texts
        // of 1 to 20 bytes: the plain-text check reads eight bytes at a time
        // and the rest one by one.
        func escaped(_ scalar: Unicode.Scalar) -> String {
            switch scalar {
            case "\n": return "\\n"
            case "\r": return "\\r"
            case "\t": return "\\t"
            case "\\": return "\\\\"
            default:
                guard scalar.value < 0x20 || scalar.value == 0x7F else { return String(scalar) }
                let hex = String(scalar.value, radix: 16)
                return "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
            }
        }
        var failures = 0
        let scalars = (0..<128).compactMap(Unicode.Scalar.init) + ["é", "日"]
        for scalar in scalars {
            for length in 1...20 {
                for place in 0..<length {
                    let before = String(repeating: "a", count: place)
                    let after = String(repeating: "~", count: length - place - 1)
                    let text = before + String(scalar) + after
                    if StderrBackend.escape(text) != before + escaped(scalar) + after { failures += 1 }
                }
            }
        }
        #expect(failures == 0)
    }

    @Test func writesWholeLinesToItsDescriptor() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        let logger = Logger(
            identifier: "flowd-test", backend: StderrBackend(fileDescriptor: writer.rawValue, hiddenFieldPrefix: "APP_"))
        logger.error("first", metadata: [.session: "s"])
        logger.info("second")
        logger.debug("dropped")
        writer.close()
        let pid = CurrentProcess.id
        let text = String(decoding: try reader.readToEnd(limit: 4096, path: "pipe"), as: UTF8.self)
        #expect(text == "flowd-test[\(pid)]: error: first (session=s)\nflowd-test[\(pid)]: info: second\n")
    }

    @Test func aWrittenLineIsTheFormattedLineAndOnlyNamesAreLowercased() throws {
        // Capitals in the identifier, the message and the values stay;
        // field names (hidden prefix or not) are lowered; escaped, quoted
        // and non-ASCII texts are written as `format` gives them.
        let (reader, writer) = try FileDescriptor.pipe()
        let backend = StderrBackend(fileDescriptor: writer.rawValue, hiddenFieldPrefix: "APP_")
        let records = [
            LogRecord(
                level: .notice, message: "Session ABC of Flow X: step Y completed",
                metadata: [.session: "ABC", .flow: "Flow X", LogField(normalizing: "Custom", prefix: "APP_"): "Ünï"],
                identifier: "FlowD", file: "f", function: "g", line: 1),
            record("tab\tand \"quotes\" (Grüße 日本)", metadata: [.error: "a=b", .step: "Σ\n"]),
        ]
        for record in records { backend.write(record) }
        writer.close()
        let pid = CurrentProcess.id
        let text = String(decoding: try reader.readToEnd(limit: 4096, path: "pipe"), as: UTF8.self)
        #expect(text == records.map { backend.format($0, pid: pid) + "\n" }.joined())
        #expect(text.hasPrefix("FlowD[\(pid)]: notice: Session ABC of Flow X: step Y completed (session=ABC flow=\"Flow X\" custom=Ünï)\n"))
    }

    @Test func withoutAPrefixToHideFieldsKeepTheirWholeName() {
        let record = LogRecord(
            level: .info, message: "m", metadata: [.session: "s"], identifier: "x", file: "f", function: "g", line: 1)
        #expect(StderrBackend().format(record, pid: 3) == "x[3]: info: m (app_session=s)")
    }
}
