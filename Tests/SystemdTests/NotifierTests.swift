import Foundation
import Testing
import TestSupport

@testable import Systemd

/// `SystemdNotifier` against a real notification socket.
///
/// `sd_notify` reads `$NOTIFY_SOCKET` from the environment, which is global
/// to the process while tests run in parallel. So the notifier runs in a
/// child process (this test binary re-executed with a filter) whose
/// environment is set before it starts; the test binds the socket and reads
/// what arrives.
@Suite("SystemdNotifier")
struct NotifierTests {
    static let scenarioVariable = "FLOWD_NOTIFY_CHILD"
    static var scenario: String? { ProcessInfo.processInfo.environment[scenarioVariable] }
    static let childFilter = "SystemdTests.NotifierTests/notifierChild"

    /// The child's side; skipped in a normal run.
    @Test(.enabled(if: NotifierTests.scenario != nil, "runs only as a child of the other notifier tests"))
    func notifierChild() throws {
        let notifier = SystemdNotifier()
        func report(_ name: String, _ call: () throws(SystemdError) -> Bool) {
            do {
                writeToParent("\(name) \(try call())")
            } catch {
                writeToParent("\(name) error \(error.message)")
            }
        }
        writeToParent("pid \(CurrentProcess.id)")
        writeToParent("connected \(notifier.isConnected)")
        report("ready") { () throws(SystemdError) in try notifier.ready() }
        report("status") { () throws(SystemdError) in try notifier.status("Serving 3 sessions\nREADY=1 ünï") }
        report("watchdog") { () throws(SystemdError) in try notifier.watchdog() }
        report("reloading") { () throws(SystemdError) in try notifier.reloading() }
        report("ready-after-reload") { () throws(SystemdError) in try notifier.ready() }
        report("stopping") { () throws(SystemdError) in try notifier.stopping() }
        report("bad-name") { () throws(SystemdError) in try notifier.send([("bad name", "1")]) }
        report("bad-value") { () throws(SystemdError) in try notifier.send([("STATUS", "a\nREADY=1")]) }
        do {
            let interval = try notifier.watchdogInterval()
            writeToParent("watchdog-interval \(interval.map { String(describing: $0) } ?? "none")")
        } catch {
            writeToParent("watchdog-interval error \(error.message)")
        }
    }

    /// Runs the child with `environment` and returns its report lines
    /// (keyed by their first word) and the notification datagrams received.
    func runChild(
        _ scenario: String, environment: [String: String], socket: NotifySocket?, expectedDatagrams: Int
    ) throws -> (report: [String: String], datagrams: [String]) {
        let (child, output) = try spawnTestChild(
            filter: Self.childFilter, environment: environment.merging([Self.scenarioVariable: scenario]) { $1 },
            removing: ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"])
        var datagrams: [String] = []
        if let socket {
            socket.wait(timeout: .seconds(60)) { $0.messages.count >= expectedDatagrams }
            datagrams = socket.messages.map(\.text)
        }
        let lines = try readAll(output)
        let status = child.wait(timeout: .seconds(60))
        #expect(status == .exited(0), "the child test failed (\(status.map { "\($0)" } ?? "still running"))")
        var report: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1)
            report[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (report, datagrams)
    }

    @Test func sendsEveryMessageToTheNotifySocket() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let socketPath = dir.file("notify")
        let socket = try NotifySocket(path: socketPath)
        let (report, datagrams) = try runChild(
            "full", environment: ["NOTIFY_SOCKET": socketPath, "WATCHDOG_USEC": "3000000"], socket: socket,
            expectedDatagrams: 6)

        let pid = try #require(report["pid"])
        #expect(report["connected"] == "true")
        for call in ["ready", "status", "watchdog", "reloading", "ready-after-reload", "stopping"] {
            #expect(report[call] == "true", "\(call): \(report[call] ?? "no report")")
        }
        try #require(datagrams.count == 6, "datagrams: \(datagrams)")
        #expect(datagrams[0] == "READY=1")
        // The newline cannot smuggle in a READY=1 of its own.
        #expect(datagrams[1] == "STATUS=Serving 3 sessions READY=1 ünï")
        #expect(datagrams[2] == "WATCHDOG=1")
        let reload = datagrams[3].split(separator: "\n")
        #expect(reload.first == "RELOADING=1")
        #expect(reload.count == 2 && reload[1].hasPrefix("MONOTONIC_USEC=") && UInt64(reload[1].dropFirst(15)) != nil)
        #expect(datagrams[4] == "READY=1")
        #expect(datagrams[5] == "STOPPING=1")
        #expect(Int32(pid) != nil)
        // The notifier sends from the child, and the socket saw the child's datagrams only.
        #expect(socket.values(of: "READY") == ["1", "1"])
        // Refused before anything is sent.
        #expect(report["bad-name"]?.hasPrefix("error invalid notification") == true)
        #expect(report["bad-value"]?.contains("newline") == true)
        // Nothing more arrives: the refused assignments were never sent.
        #expect(!socket.wait(timeout: .milliseconds(100)) { $0.messages.count > 6 })
        #expect(report["watchdog-interval"] == String(describing: Duration.seconds(3)))
    }

    @Test func isAQuietNoOpWithoutNotifySocket() throws {
        let (report, _) = try runChild("unset", environment: [:], socket: nil, expectedDatagrams: 0)
        #expect(report["connected"] == "false")
        for call in ["ready", "status", "watchdog", "reloading", "stopping"] {
            #expect(report[call] == "false", "\(call): \(report[call] ?? "no report")")
        }
        #expect(report["watchdog-interval"] == "none")
    }

    @Test func reportsAnUnreachableSocketAndABadWatchdog() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let (report, _) = try runChild(
            "broken", environment: ["NOTIFY_SOCKET": dir.file("nobody-listens"), "WATCHDOG_USEC": "soon"],
            socket: nil, expectedDatagrams: 0)
        #expect(report["connected"] == "true")
        let ready = try #require(report["ready"])
        #expect(ready.hasPrefix("error cannot notify systemd (READY=1)"), "ready: \(ready)")
        #expect(report["watchdog-interval"]?.hasPrefix("error WATCHDOG_USEC") == true)
    }

    @Test func encodesAssignmentsOnePerLine() throws {
        #expect(try SystemdNotifier.encode([("READY", "1"), ("STATUS", "ok")]) == "READY=1\nSTATUS=ok")
        #expect(throws: SystemdError.self) { try SystemdNotifier.encode([]) }
        #expect(throws: SystemdError.self) { try SystemdNotifier.encode([("lower", "1")]) }
        #expect(throws: SystemdError.self) { try SystemdNotifier.encode([("", "1")]) }
        #expect(throws: SystemdError.self) { try SystemdNotifier.encode([("STATUS", "nul\u{0}byte")]) }
        #expect(SystemdNotifier.singleLine("a\nb\r\tc\u{7}") == "a b  c ")
    }
}
