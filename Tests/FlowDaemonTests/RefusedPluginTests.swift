import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// The loader's refusals seen through the real daemon: every plugin file it
/// will not load appears in `ListPlugins` with its status and reason, and gets
/// one "plugin refused" line in flowd's log (stderr here, the journal in
/// production); the good plugin next to them loads and works.
@Suite("Refused plugins through flowd")
struct RefusedPluginTests {
    /// One file in the plugin directory that must not load.
    struct Refusal: Sendable, CustomStringConvertible {
        /// The file name in the plugin directory.
        var file: String
        /// `failed` or `disabled`.
        var status: String
        /// The exact reason, or nil when `check` decides.
        var reason: String?
        /// For a reason that contains something the test cannot know exactly.
        var check: (@Sendable (String) -> Bool)?

        init(_ file: String, _ status: String = "failed", reason: String) {
            self.file = file
            self.status = status
            self.reason = reason
        }

        init(_ file: String, _ status: String = "failed", where check: @escaping @Sendable (String) -> Bool) {
            self.file = file
            self.status = status
            self.check = check
        }

        func accepts(_ actual: String) -> Bool {
            if let reason { return actual == reason }
            return check?(actual) ?? false
        }

        var description: String { file }
    }

    static let good = "10-test.so"
    /// A file name with a control character: refused before it is opened.
    static let unprintable = "95-tab\there.so"
    /// A file name that is not UTF-8 (`96-<0xFF>.so`): flowd shows it with U+FFFD.
    static let notUTF8: [UInt8] = Array("96-".utf8) + [0xFF] + Array(".so".utf8)
    static let notUTF8Shown = "96-\u{FFFD}.so"
    /// The uid that owns `foreignOwner`; only root can give a file away.
    static let foreignUID: UInt32 = 4242
    static let foreignOwner = "90-foreign.so"
    static var asRoot: Bool { geteuid() == 0 }

    /// Everything in the plugin directory that must be refused, with the
    /// loader's exact words (Sources/PluginHost/PluginLoader.swift).
    static func refusals(directory: String) -> [Refusal] {
        var list = [
            Refusal("20-wrong-abi.so") { reason in
                // The host's ABI number is FlowKit's, which this target does not import.
                // SDK 1.1's numbers are fingerprints, shown in hex (0x8… and up).
                let prefix = "built against FlowKit ABI 7, this flowd has ABI 0x"
                let suffix = " (the plugin's SDK is older than 1.1): rebuild it with this flowd's SDK"
                guard reason.hasPrefix(prefix), reason.hasSuffix(suffix) else { return false }
                let host = reason.dropFirst(prefix.count).dropLast(suffix.count)
                return UInt32(host, radix: 16).map { $0 >= 0x8000_0000 } ?? false
            },
            Refusal("30-no-entry.so", reason: "missing entry symbol flowd_plugin_abi_version; is it a flowd plugin?"),
            Refusal("40-test-copy.so", reason: "another plugin named test is already loaded from \(directory)/\(good)"),
            Refusal("50-link.so", reason: "is a symlink"),
            Refusal("60-writable.so", reason: "is writable by group or others (mode 0757); plugins must not be"),
            Refusal("65-directory.so", reason: "is not a regular file"),
            Refusal("66-fifo.so", reason: "is not a regular file"),
            Refusal(
                "70-duplicate.so",
                reason: "capability test.even is already provided by plugin test (\(directory)/\(good))"),
            Refusal(
                "80-bad-names.so",
                reason: "invalid capability name \"Undotted\": use dot-separated parts (at least two) of lowercase "
                    + "letters, digits, '-' and '_'"),
            Refusal("82-bad-options.so", reason: "capability bad-options.twice declares the option \"path\" twice"),
            // Disabled by file name in the configuration: never even opened
            // (it is the fixture whose registration kills the process).
            Refusal("85-disabled.so", "disabled", reason: "disabled by the administrator"),
            Refusal(unprintable, reason: "its file name is not printable UTF-8"),
            Refusal(notUTF8Shown, reason: "its file name is not printable UTF-8"),
        ]
        if asRoot {
            // A root daemon trusts only root's files (its euid is root).
            list.append(Refusal(foreignOwner, reason: "is owned by uid \(foreignUID); plugins must be owned by root"))
        }
        return list
    }

    /// Copies `product`'s library into `directory` as `name` with `mode`.
    static func install(_ product: String, into directory: String, as name: String, mode: mode_t = 0o755) throws {
        let target = directory + "/" + name
        try FileManager.default.copyItem(atPath: FlowdBinary.buildDirectory + "/lib\(product).so", toPath: target)
        guard chmod(target, mode) == 0 else { throw TestSupportError("chmod \(target): errno \(errno)") }
    }

    static let settings: DaemonSettings = {
        var flows = PluginFlows.submitFlows
        // Names a capability only the refused duplicate plugin registers.
        flows["dup.json"] = """
            { "format": 1, "id": "dup", "title": "Duplicate",
              "steps": [{"id": "one", "title": "One",
                         "fields": [{"id": "x", "type": "text", "label": "X", "validators": [{"plugin": "duplicate.fine"}]}]}]
            }
            """
        return DaemonSettings(
            flows: flows, configuration: "[Plugins]\nDisable=85-disabled.so\n",
            preparePlugins: { dir in
                try install("FixtureTestPlugin", into: dir, as: good)
                try install("FixtureWrongABIPlugin", into: dir, as: "20-wrong-abi.so")
                try install("FixtureNoEntryPlugin", into: dir, as: "30-no-entry.so")
                try install("FixtureTestPlugin", into: dir, as: "40-test-copy.so")
                guard symlink(good, dir + "/50-link.so") == 0 else { throw TestSupportError("symlink: errno \(errno)") }
                try install("FixtureTestPlugin", into: dir, as: "60-writable.so", mode: 0o757)
                try FileManager.default.createDirectory(atPath: dir + "/65-directory.so", withIntermediateDirectories: false)
                // O_NONBLOCK keeps flowd from hanging on it before READY=1.
                guard mkfifo(dir + "/66-fifo.so", 0o644) == 0 else { throw TestSupportError("mkfifo: errno \(errno)") }
                try install("FixtureDuplicatePlugin", into: dir, as: "70-duplicate.so")
                try install("FixtureBadNamesPlugin", into: dir, as: "80-bad-names.so")
                try install("FixtureBadOptionsPlugin", into: dir, as: "82-bad-options.so")
                try install("FixtureCrashOnLoadPlugin", into: dir, as: "85-disabled.so")
                try install("FixtureTestPlugin", into: dir, as: unprintable)
                let raw = Array(dir.utf8) + Array("/".utf8) + notUTF8
                let fd = open(raw.map { CChar(bitPattern: $0) } + [0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw TestSupportError("creating the non-UTF-8 name: errno \(errno)") }
                close(fd)
                if asRoot {
                    try install("FixtureTestPlugin", into: dir, as: foreignOwner)
                    guard chown(dir + "/" + foreignOwner, foreignUID, foreignUID) == 0 else {
                        throw TestSupportError("chown: errno \(errno)")
                    }
                }
                // Not looked at: a hidden file (a world-writable one, which
                // would be refused if it were) and a file not named *.so.
                try install("FixtureTestPlugin", into: dir, as: ".hidden.so", mode: 0o777)
                try install("FixtureTestPlugin", into: dir, as: "notes.txt")
            })
    }()

    /// A log line shows control characters escaped (StderrBackend).
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\t", with: "\\t")
    }

    @Test("each refused file: ListPlugins status and reason, one 'plugin refused' log line; the good plugin works")
    func refusedPlugins() async throws {
        try await withDaemon(Self.settings) { fixture in
            let dir = fixture.pluginDirectory
            let refusals = Self.refusals(directory: dir)
            let plugins = try await fixture.client.listPlugins()
            let byPath = Dictionary(plugins.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })

            // One entry per *.so file looked at; the hidden file and notes.txt are not.
            #expect(
                Set(byPath.keys) == Set(([Self.good] + refusals.map(\.file)).map { dir + "/" + $0 }),
                "\(plugins)")
            #expect(plugins.count == refusals.count + 1, "\(plugins)")

            let good = try #require(byPath[dir + "/" + Self.good], "\(plugins)")
            #expect(good.name == "test")
            #expect(good.status == .loaded)
            #expect(good.error == "")
            #expect(good.capabilities.contains("test.even"))

            let log = fixture.daemon.standardError
            let lines = log.split(separator: "\n").map(String.init)
            for refusal in refusals {
                let path = dir + "/" + refusal.file
                guard let entry = byPath[path] else {
                    Issue.record("\(refusal.file) is missing from ListPlugins: \(plugins)")
                    continue
                }
                #expect(entry.status.rawValue == refusal.status, "\(refusal.file): \(entry)")
                let reason = entry.error
                #expect(refusal.accepts(reason), "\(refusal.file): reason \"\(reason)\"")
                // Exactly one log line for the file, with ListPlugins' reason.
                let marker = "plugin refused: \(Self.escaped(path)): "
                let matching = lines.filter { $0.contains(marker) }
                #expect(matching.count == 1, "\(refusal.file): \(matching.count) log lines; the log:\n\(log)")
                if let line = matching.first {
                    #expect(line.contains(": error: \(marker)\(Self.escaped(reason)) ("), "\(line)")
                }
            }
            // No more refusals than files refused, and none for the good plugin.
            let refusedLines = lines.filter { $0.contains("plugin refused") }
            #expect(refusedLines.count == refusals.count, "\(refusedLines)")
            #expect(!log.contains("plugin refused: \(dir)/\(Self.good):"))
            #expect(!log.contains(".hidden.so") && !log.contains("notes.txt"), "\(log)")

            // The flow that needs the refused duplicate's capability is refused;
            // the good plugin's flows are served.
            #expect(try await fixture.client.flowIDs() == ["echo", "fail", "late", "opaque", "providers", "slow"])
            #expect(log.contains("dup.json") && log.contains("duplicate.fine"), "\(log)")

            // The good plugin works: its validator (test.even, which the
            // refused duplicate claimed too) and its submit action.
            let providers = try await fixture.client.start("providers")
            #expect(try await fixture.client.setAnswers(providers, ["even": .int64(3)])["even"] == "An even number must be even.")
            #expect(try await fixture.client.setAnswers(providers, ["even": .int64(4)]) == [:])
            let echo = try await fixture.client.start("echo")
            #expect(try await fixture.client.setAnswers(echo, ["name": "Ada"]) == [:])
            #expect(try await fixture.client.continueStep(echo) == [:])
            try await fixture.client.submit(echo)
            #expect(try await fixture.client.property(.state, of: echo) == "submitted")

            // Still serving: a new connection is answered, and ListPlugins is unchanged.
            let other = try fixture.connect()
            try await other.ping()
            #expect(try await other.listPlugins() == plugins)
            #expect(fixture.daemon.child.exitStatus == nil)
        }
    }
}
