import Testing
import TestSupport

/// Swift concurrency inside GLib's main loop, through the real libdispatch
/// and GLib in a process of its own (the probe runs a GMainLoop on its main
/// thread, as `g_application_run` does; it needs no display).
@Suite("main-queue bridge")
struct MainQueueBridgeTests {
    static let probe = BuildProducts.executable("flowd-gtk-mainloop-probe")

    @Test("a MainActor task, a detached task's result and DispatchQueue.main all run on the GLib loop thread")
    func mainActorWorkRunsOnTheLoop() throws {
        let run = try ChildProcess.run(Self.probe, timeout: .seconds(60))
        #expect(run.status == .exited(0), "probe: \(run.standardOutput)\(run.standardError)")
        for check in ["main-actor-task", "detached-to-main-actor", "dispatch-main"] {
            #expect(run.standardOutput.contains("\(check): ran on the GLib loop thread"), "\(run.standardOutput)")
        }
    }

    @Test("without the bridge, main-actor work never runs under GLib's loop (the probe can fail)")
    func withoutTheBridgeNothingRuns() throws {
        let run = try ChildProcess.run(Self.probe, ["--no-bridge", "--give-up-after", "1000"], timeout: .seconds(60))
        #expect(run.status == .exited(1))
        #expect(run.standardOutput.contains("gave up waiting for: detached-to-main-actor, dispatch-main, main-actor-task"))
    }
}
