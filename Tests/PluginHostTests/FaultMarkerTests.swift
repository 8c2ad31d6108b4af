// The crash guard's moving parts inside one process: which threads are marked
// as inside a plugin call, and how a slot's state word reads back. (The
// signal handlers themselves are tested in subprocesses, CrashGuardTests.)
import FlowKit
import FlowdSystem
import Glibc
@testable import PluginHost
import PluginTestSupport
import Testing

@Suite("Crash guard: thread markers and slots")
struct FaultMarkerTests {
    /// A capability whose plugin never runs: the tests pass their own body.
    static let capability = RegisteredCapability(
        id: CapabilityID(kind: .fieldValidator, name: "probe.marker"),
        plugin: PluginIdentity(name: "probe", path: "/p/probe.so"),
        capability: .fieldValidator("probe.marker", NeverValidator()))

    struct NeverValidator: FieldValidator {
        func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? { nil }
    }

    /// What the code of a guarded call saw: its thread's marker and the
    /// marked word's value at that moment.
    struct Sighting: Sendable {
        var marker: FaultMarker?
        var word: UInt64?

        static var here: Sighting {
            let marker = LibPluginHost.currentFaultMarker
            return Sighting(marker: marker, word: marker.map { LibPluginHost.loadStateWord($0.word) })
        }
    }

    @Test("a guarded call's code runs on a marked thread, also after it suspends and in its child tasks")
    func marksTheCallsThreads() async throws {
        let temp = try TemporaryDirectory()
        let crashGuard = try FileCrashGuard(path: temp.appending("plugin-calls"), slots: 4)
        #expect(LibPluginHost.faultHandlersInstalled)
        let caller = PluginCaller(
            registry: PluginRegistry(), crashGuard: crashGuard, executor: PluginExecutor(maximumThreads: 4))
        let result = await caller.call(Self.capability, timeout: .seconds(60)) { _ -> [Sighting] in
            var seen = [Sighting.here]
            try await Task.sleep(for: .milliseconds(2))
            seen.append(.here)
            async let child = Sighting.here
            seen.append(await child)
            // Work the call hands to a task without its executor is not its code.
            seen.append(await Task.detached { Sighting.here }.value)
            return seen
        }
        guard case .success(let seen) = result else {
            Issue.record("the call did not succeed: \(result)")
            return
        }
        let marker = try #require(seen[0].marker)
        #expect(SlotState.state(marker.expected) == SlotState.inCall)
        #expect(seen[0].word == marker.expected, "while the call runs its word says so")
        #expect(seen[1].marker == marker, "after a suspension")
        #expect(seen[2].marker == marker, "in a child task")
        #expect(seen[3].marker == nil, "in a detached task")
        // Afterwards: the slot is free, and the caller's thread was never marked.
        #expect(LibPluginHost.loadStateWord(marker.word) == SlotState.free)
        #expect(LibPluginHost.currentFaultMarker == nil)
        #expect(crashGuard.pending().isEmpty)
    }

    @Test("two calls in flight mark their threads with different words; a guard without markers marks nothing")
    func markersAreDistinct() async throws {
        let temp = try TemporaryDirectory()
        let crashGuard = try FileCrashGuard(path: temp.appending("plugin-calls"), slots: 4)
        let caller = PluginCaller(
            registry: PluginRegistry(), crashGuard: crashGuard, executor: PluginExecutor(maximumThreads: 4))
        async let first = caller.call(Self.capability, timeout: .seconds(60)) { _ in Sighting.here }
        async let second = caller.call(Self.capability, timeout: .seconds(60)) { _ in Sighting.here }
        let (a, b) = await (first, second)
        guard case .success(let x) = a, case .success(let y) = b else {
            Issue.record("the calls did not succeed: \(a), \(b)")
            return
        }
        let mx = try #require(x.marker)
        let my = try #require(y.marker)
        #expect(mx.expected != my.expected, "each call has its own generation")

        let unmarked = PluginCaller(registry: PluginRegistry(), crashGuard: MemoryCrashGuard(), executor: PluginExecutor())
        let result = await unmarked.call(Self.capability, timeout: .seconds(60)) { _ in Sighting.here }
        guard case .success(let z) = result else {
            Issue.record("the call did not succeed: \(result)")
            return
        }
        #expect(z.marker == nil)
    }

    @Test("slots read back as crashed (with the signal) or interrupted; a stale word is neither")
    func slotStates() throws {
        let temp = try TemporaryDirectory()
        let path = temp.appending("plugin-calls")
        let crashedCall = GuardedCall(pluginPath: "/p/a.so", pluginName: "a", capability: "a.one", startedAt: 1)
        let runningCall = GuardedCall(pluginPath: "/p/b.so", pluginName: "b", capability: "b.two", startedAt: 2)
        do {
            let first = try FileCrashGuard(path: path, slots: 4)
            let crashed = first.begin(crashedCall)
            _ = first.begin(runningCall)
            let marker = try #require(crashed.faultMarker)
            // What the signal handler writes for a SIGBUS on a thread in this call.
            let word = (marker.expected & ~0xFFFF) | (UInt64(SIGBUS) << 8) | SlotState.crashed
            LibPluginHost.storeStateWord(marker.word, word)
        }
        let second = try Self.reopen(path, slots: 4)
        #expect(
            Set(second.pending())
                == [
                    LeftoverCall(call: crashedCall, ending: .crashed(signal: SIGBUS)),
                    LeftoverCall(call: runningCall, ending: .interrupted),
                ])
        #expect(crashedCall.crashReason(signal: SIGBUS).hasSuffix(" (SIGBUS); disabled until its file changes"))
        #expect(!crashedCall.crashReason(signal: 0).contains("("))
    }

    /// Opens the guard at `path` again once the guard before it let go. A
    /// child another test of this process spawns holds a copy of every
    /// descriptor (close-on-exec ones too) from its clone to its exec, and
    /// so the lock: while that lasts the open is refused with EWOULDBLOCK,
    /// and is tried again (for a few seconds; any other failure at once).
    static func reopen(_ path: String, slots: Int) throws -> FileCrashGuard {
        let refused = "\(path): flock: \(Errno.wouldBlock)"
        let giveUp = MonotonicClock.now().advanced(by: .seconds(5))
        while true {
            switch Result(catching: { () throws(CrashGuardError) in try FileCrashGuard(path: path, slots: slots) }) {
            case .success(let crashGuard):
                return crashGuard
            case .failure(let error):
                guard error.description == refused, MonotonicClock.now() < giveUp else { throw error }
                MonotonicClock.sleep(for: .milliseconds(5))
            }
        }
    }

    @Test("the loader marks its own thread while plugin code runs there, and only then")
    func loaderMarksItsThread() throws {
        let temp = try TemporaryDirectory()
        let crashGuard = try FileCrashGuard(path: temp.appending("plugin-calls"), slots: 4)
        let token = crashGuard.begin(
            GuardedCall(pluginPath: "/p/x.so", pluginName: "x", capability: nil, startedAt: 1))
        let inside = PluginLoader.markingThread(token) { LibPluginHost.currentFaultMarker }
        #expect(inside == token.faultMarker)
        #expect(inside != nil)
        #expect(LibPluginHost.currentFaultMarker == nil)
        crashGuard.end(token)
        // An unmarked token (another guard) marks nothing.
        #expect(PluginLoader.markingThread(CrashGuardToken(rawValue: 7)) { LibPluginHost.currentFaultMarker } == nil)
    }
}
