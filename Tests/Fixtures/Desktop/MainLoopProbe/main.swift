// Runs a GLib main loop on the main thread, as `g_application_run` does in
// flowd-gtk, with the main-queue bridge installed, and checks that Swift
// concurrency reaches it:
//   1. a `Task { @MainActor in … }` started before the loop runs on the loop thread;
//   2. async work on another thread (a detached task) hands its result to the
//      main actor, which receives it on the loop thread;
//   3. a plain thread's `DispatchQueue.main.async` block runs on the loop thread.
// Prints one line per check and exits 0 when all ran, 1 (naming the missing
// ones) when the loop gave up waiting (after 20 s, or `--give-up-after MS`).
// `--no-bridge` leaves the bridge out, to show the checks can fail.
import Adwaita
import Dispatch
import FlowdSystem

@MainActor
final class Probe {
    let loop = MainLoop()
    var passed: Set<String> = []
    let expected: Set<String> = ["main-actor-task", "detached-to-main-actor", "dispatch-main"]

    func record(_ check: String, onLoopThread: Bool) {
        print("\(check): \(onLoopThread ? "ran on the GLib loop thread" : "ran OFF the loop thread")")
        if onLoopThread { passed.insert(check) }
        if passed == expected { loop.quit() }
    }
}

let arguments = CommandLine.arguments
let bridged = !arguments.contains("--no-bridge")
let giveUpAfter = arguments.firstIndex(of: "--give-up-after").flatMap { i in
    i + 1 < arguments.count ? Int(arguments[i + 1]) : nil
} ?? 20_000
let exitCode: Int32 = MainActor.assumeIsolated {
    let probe = Probe()
    if bridged { MainQueueBridge.install() }

    Task { @MainActor in probe.record("main-actor-task", onLoopThread: MainLoop.isLoopThread) }
    Task.detached {
        // Work off the main thread, then its result goes to the UI's actor.
        let sum = (1...1000).reduce(0, +)
        await MainActor.run { probe.record("detached-to-main-actor", onLoopThread: MainLoop.isLoopThread && sum == 500500) }
    }
    DispatchQueue.global().async {
        DispatchQueue.main.async {
            MainActor.assumeIsolated { probe.record("dispatch-main", onLoopThread: MainLoop.isLoopThread) }
        }
    }
    // A generous limit so a broken bridge ends the probe instead of hanging the test run.
    MainLoop.after(milliseconds: giveUpAfter) {
        print("gave up waiting for: \(probe.expected.subtracting(probe.passed).sorted().joined(separator: ", "))")
        probe.loop.quit()
    }
    probe.loop.run()
    return probe.passed == probe.expected ? 0 : 1
}
CurrentProcess.exit(exitCode)
