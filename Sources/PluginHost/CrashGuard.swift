import FlowdSystem
import Synchronization

/// One plugin call in progress, as the crash guard records it.
package struct GuardedCall: Sendable, Hashable {
    /// The plugin file.
    package var pluginPath: String
    /// The plugin's registered name (the file name when not known yet).
    package var pluginName: String
    /// The capability being called, or nil while the loader loads the plugin
    /// (`dlopen`, its constructors and its entry points).
    package var capability: String?
    /// When the call started, in microseconds since the epoch.
    package var startedAt: Int64

    /// Describes one call; `capability` nil means loading.
    package init(pluginPath: String, pluginName: String, capability: String?, startedAt: Int64) {
        self.pluginPath = pluginPath
        self.pluginName = pluginName
        self.capability = capability
        self.startedAt = startedAt
    }

    /// A single-line text form, for a store that keeps one string per record:
    /// `v1 TAB startedAt TAB name TAB capability TAB path`. Names never hold a
    /// tab (the loader refuses such names); the path comes last so it may.
    package var encoded: String {
        "v1\t\(startedAt)\t\(pluginName)\t\(capability ?? "")\t\(pluginPath)"
    }

    /// Reads ``encoded`` back; nil for anything else.
    package init?(encoded: String) {
        let parts = encoded.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "v1", let started = Int64(parts[1]), !parts[4].isEmpty else {
            return nil
        }
        self.init(
            pluginPath: String(parts[4]), pluginName: String(parts[2]),
            capability: parts[3].isEmpty ? nil : String(parts[3]), startedAt: started)
    }

    /// The reason shown for a plugin whose code crashed the process during
    /// this call (with `signal`, 0 when unknown), found at start-up.
    func crashReason(signal: Int32) -> String {
        let how = signal > 0 ? " (\(Signal(rawValue: signal)))" : ""
        return "crashed the daemon during \(what) at \(startTime)\(how); "
            + "disabled until its file changes"
    }

    /// What the journal says about this call when the process went away during
    /// it without a fault in the plugin's code: the plugin is not blamed.
    package var interruptionNotice: String {
        "flowd stopped during \(what) (plugin \(pluginName), \(pluginPath), started "
            + "\(startTime)); not blamed: nothing crashed in the plugin"
    }

    /// When the call started, RFC 3339 in UTC.
    private var startTime: String {
        CalendarTime.utc(microsecondsSinceEpoch: startedAt)?.rfc3339UTC ?? "@\(startedAt / 1_000_000)"
    }

    /// "a call to flowd.spool", or "loading".
    private var what: String {
        capability.map { "a call to \($0)" } ?? "loading"
    }
}

/// How a call that an earlier process left behind ended.
package enum CallEnding: Sendable, Hashable {
    /// A fatal signal (`SIGSEGV`, `SIGABRT`, …) that was a fault of a thread
    /// inside the plugin's code during the call: the plugin crashed the process.
    case crashed(signal: Int32)
    /// The process went away while the call ran, with nothing crashing in the
    /// plugin's code: killed from outside (`SIGKILL`, the watchdog, the OOM
    /// killer, a power cut), stopped while the call still ran, crashed on
    /// another thread, or ended by the plugin with `exit()`.
    case interrupted
}

/// A call an earlier process was in when it went away, and how it ended.
package struct LeftoverCall: Sendable, Hashable {
    /// The call.
    package var call: GuardedCall
    /// Crashed in the plugin's code, or merely interrupted.
    package var ending: CallEnding

    /// A leftover from its parts.
    package init(call: GuardedCall, ending: CallEnding) {
        self.call = call
        self.ending = ending
    }
}

/// Proof that a call was recorded; hand it back to ``CrashGuard/end(_:)``.
package struct CrashGuardToken: Sendable, Hashable {
    /// The guard's own number for the record; 0 means "not recorded".
    package var rawValue: UInt64
    /// Where a fault in the call's code is recorded: set by guards that can
    /// tell a crash from an interruption (``FileCrashGuard``), nil otherwise.
    let faultMarker: FaultMarker?

    /// Wraps a guard's record number.
    package init(rawValue: UInt64) {
        self.init(rawValue: rawValue, faultMarker: nil)
    }

    init(rawValue: UInt64, faultMarker: FaultMarker?) {
        self.rawValue = rawValue
        self.faultMarker = faultMarker
    }
}

/// Remembers which plugin call is in progress, in a place that survives the
/// process dying, so that a plugin that crashes the daemon is found on the next
/// start — and told apart from a plugin that was merely in a call when the
/// process was killed from outside.
///
/// ``FileCrashGuard`` is the real one; ``MemoryCrashGuard`` serves tests and
/// tools. Implementations must be cheap: `begin` and `end` run on every plugin
/// call. They must not throw: a guard that cannot record should say so in its
/// own log and let the call run.
package protocol CrashGuard: Sendable {
    /// Records that `call` is starting. Must be durable against a crash of
    /// this process (not necessarily against power loss) before it returns.
    func begin(_ call: GuardedCall) -> CrashGuardToken
    /// Forgets the call `token` stands for.
    func end(_ token: CrashGuardToken)
    /// The calls an earlier process was in when it went away, each crashed
    /// or interrupted.
    func pending() -> [LeftoverCall]
    /// Forgets every leftover call (after start-up has dealt with them).
    func clearPending()
}

/// A crash guard that keeps its records in memory: for tests and tools.
///
/// There is no earlier process in memory, so tests play one: calls begun and
/// not ended are ``pending()`` as interrupted, or as crashed after
/// ``recordCrash(_:signal:)``.
package final class MemoryCrashGuard: CrashGuard {
    private struct State {
        var next: UInt64 = 1
        var active: [UInt64: GuardedCall] = [:]
        var crashes: [UInt64: Int32] = [:]
        var begun: [GuardedCall] = []
    }
    private let state = LockedValue(State())

    /// An empty guard.
    package init() {}

    /// Keeps `call` in memory until ``end(_:)``.
    package func begin(_ call: GuardedCall) -> CrashGuardToken {
        state.withLock { s in
            let token = s.next
            s.next += 1
            s.active[token] = call
            s.begun.append(call)
            return CrashGuardToken(rawValue: token)
        }
    }

    /// Forgets the call.
    package func end(_ token: CrashGuardToken) {
        state.withLock { s in
            s.active[token.rawValue] = nil
            s.crashes[token.rawValue] = nil
        }
    }

    /// Records that the call `token` stands for crashed with `signal`, as the
    /// signal handlers do for a ``FileCrashGuard`` (for tests).
    package func recordCrash(_ token: CrashGuardToken, signal: Int32) {
        state.withLock { s in
            if s.active[token.rawValue] != nil { s.crashes[token.rawValue] = signal }
        }
    }

    /// The calls begun and not ended, in the order they began.
    package func pending() -> [LeftoverCall] {
        state.withLock { s in
            s.active.keys.sorted().compactMap { token in
                s.active[token].map { call in
                    LeftoverCall(call: call, ending: s.crashes[token].map { .crashed(signal: $0) } ?? .interrupted)
                }
            }
        }
    }

    /// Forgets every call in progress.
    package func clearPending() {
        state.withLock { s in
            s.active.removeAll()
            s.crashes.removeAll()
        }
    }

    /// Every call recorded so far, in order, ended or not (for tests).
    package var begunCalls: [GuardedCall] {
        state.withLock { $0.begun }
    }

    /// The calls in progress right now.
    package var activeCalls: [GuardedCall] { pending().map(\.call) }
}

/// Why a ``FileCrashGuard`` could not be set up.
package struct CrashGuardError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the file.
    package var description: String
}

/// A crash guard kept in a small memory-mapped file of fixed slots, which
/// tells a plugin that crashed the process from one that was merely in a call
/// when the process was killed.
///
/// `begin` copies the call into a free slot of a `MAP_SHARED` mapping and sets
/// the slot's state word to "in call"; `end` sets it to "free". Both are plain
/// memory writes, no system call: the mapping *is* the page cache, so the
/// record outlives this process the moment it is written, which is what a
/// crash guard needs (it does not have to survive a power cut, so there is no
/// `msync`). The next process maps the same file and reads the used slots.
///
/// The threads that run a call's code are marked with its state word (see
/// ``PluginCaller`` and ``PluginLoader``), and the guard installs handlers for
/// the fatal signals (`SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGFPE`, `SIGABRT`,
/// `SIGTRAP`, `SIGSYS`). A fault on a marked thread turns its call's word to
/// "crashed" before the signal goes on to the handler that was there before
/// (the Swift runtime's backtracer, or the default action and its core dump).
/// So at the next start a slot says "crashed" only when the plugin's own code
/// faulted; "in call" means the process was killed, or crashed elsewhere.
///
/// The file is created mode 0600 (`O_NOFOLLOW`), must belong to this uid, and
/// is locked with `flock` so two processes cannot share one. With more calls in
/// progress than slots, the extra calls run unrecorded (and say so on stderr).
package final class FileCrashGuard: CrashGuard, @unchecked Sendable {
    // @unchecked: `base` points into a mapping this object owns until deinit
    // (every marker that points into it keeps this object alive); a slot's
    // record is written only by the call that holds it, its state word only
    // atomically, and the free list is behind a lock.
    /// Slots when the caller does not say: more than calls can be in progress
    /// at once in practice (a slot is 2 KiB of a sparse file).
    package static let defaultSlotCount = 512
    static let slotSize = 2048
    static let headerSize = 4096
    /// Slot layout: the state word (8 bytes), the record's length (4), 4
    /// unused, then the record (``GuardedCall/encoded``).
    static let recordOffset = 16
    /// Version 2 of the layout: a state word with "crashed" in it.
    static let magic: [UInt8] = Array("FLOWDCG2".utf8)

    private let file: FileDescriptor
    private let base: UnsafeMutableRawPointer
    private let length: Int
    private let slotCount: Int
    private let path: String
    /// Free slots, and the slots an earlier process left used (its calls in
    /// progress when it went away).
    private let slots: LockedValue<(free: [Int], leftovers: [Int])>
    /// The last call's generation: every call's "in call" word is unique, so
    /// a thread marker that outlived its call never matches a later one.
    private let generation = Atomic<UInt64>(0)

    /// Opens or creates the guard file at `path` and installs the fatal-signal
    /// handlers (once per process). Calls recorded by an earlier process stay
    /// readable through ``pending()``.
    package init(path: String, slots: Int = FileCrashGuard.defaultSlotCount) throws(CrashGuardError) {
        let slotCount = max(1, slots)
        let length = Self.headerSize + slotCount * Self.slotSize
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, [.readWrite, .create, .noFollow], mode: 0o600)
        } catch {
            throw CrashGuardError(description: "\(path): cannot open: \(error.errno)")
        }
        do {
            let status = try file.status()
            let owner = CurrentProcess.effectiveUserID
            guard status.isRegularFile, status.owner == owner, !status.isWritableByGroupOrOthers else {
                throw CrashGuardError(
                    description: "\(path): the crash guard file must be a regular file of uid "
                        + "\(owner), not writable by group or others")
            }
            try file.lockExclusively()
            let fresh = status.size != Int64(length)
            if fresh { try file.truncate(to: length) }
            let base = try file.mapShared(length: length)
            if fresh || !Self.hasHeader(base, slotCount: slotCount) {
                // New, or written by another layout: start empty.
                base.initializeMemory(as: UInt8.self, repeating: 0, count: length)
                Self.writeHeader(base, slotCount: slotCount)
            }
            self.base = base
        } catch let e as CrashGuardError {
            throw e
        } catch let e as SystemCallError {
            throw CrashGuardError(description: "\(path): \(e.call): \(e.errno)")
        } catch {
            throw CrashGuardError(description: "\(path): \(error)")
        }
        self.file = file
        self.length = length
        self.slotCount = slotCount
        self.path = path
        // Slots in use by the earlier process stay untouched until
        // clearPending(); new calls take the others.
        var available: [Int] = []
        var leftovers: [Int] = []
        for slot in stride(from: slotCount - 1, through: 0, by: -1) {
            if Self.state(base, slot) != SlotState.free { leftovers.append(slot) } else { available.append(slot) }
        }
        self.slots = LockedValue((available, leftovers.reversed()))
        do {
            try LibPluginHost.installFaultHandlers()
        } catch {
            complain("cannot install the fatal-signal handlers (\(error)); a crash will not be told from a kill")
        }
    }

    deinit {
        FileDescriptor.unmap(base, length: length)
    }

    private static func hasHeader(_ base: UnsafeMutableRawPointer, slotCount: Int) -> Bool {
        let bytes = UnsafeRawBufferPointer(start: base, count: 16)
        return Array(bytes.prefix(8)) == magic && base.load(fromByteOffset: 8, as: UInt32.self) == UInt32(slotCount)
            && base.load(fromByteOffset: 12, as: UInt32.self) == UInt32(slotSize)
    }

    private static func writeHeader(_ base: UnsafeMutableRawPointer, slotCount: Int) {
        base.copyMemory(from: magic, byteCount: magic.count)
        base.storeBytes(of: UInt32(slotCount), toByteOffset: 8, as: UInt32.self)
        base.storeBytes(of: UInt32(slotSize), toByteOffset: 12, as: UInt32.self)
    }

    private static func slotAddress(_ base: UnsafeMutableRawPointer, _ slot: Int) -> UnsafeMutableRawPointer {
        base + headerSize + slot * slotSize
    }

    /// The slot's state word (8-byte aligned: the header and slots are).
    private static func stateWord(_ base: UnsafeMutableRawPointer, _ slot: Int) -> UnsafeMutablePointer<UInt64> {
        slotAddress(base, slot).assumingMemoryBound(to: UInt64.self)
    }

    private static func state(_ base: UnsafeMutableRawPointer, _ slot: Int) -> UInt64 {
        SlotState.state(LibPluginHost.loadStateWord(stateWord(base, slot)))
    }

    /// Writes `call` into a free slot and marks it "in call".
    package func begin(_ call: GuardedCall) -> CrashGuardToken {
        let bytes = Array(call.encoded.utf8)
        guard bytes.count <= Self.slotSize - Self.recordOffset else {
            complain("a call record of \(bytes.count) bytes does not fit a slot")
            return CrashGuardToken(rawValue: 0)
        }
        guard let slot = slots.withLock({ $0.free.popLast() }) else {
            complain("all \(slotCount) slots are in use; this call runs unrecorded")
            return CrashGuardToken(rawValue: 0)
        }
        let address = Self.slotAddress(base, slot)
        address.storeBytes(of: UInt32(bytes.count), toByteOffset: 8, as: UInt32.self)
        (address + Self.recordOffset).copyMemory(from: bytes, byteCount: bytes.count)
        let word = Self.stateWord(base, slot)
        let inCall = SlotState.inCall(generation: generation.wrappingAdd(1, ordering: .relaxed).newValue)
        LibPluginHost.storeStateWord(word, inCall)  // last, after the record (release)
        return CrashGuardToken(rawValue: UInt64(slot) + 1, faultMarker: FaultMarker(word: word, expected: inCall))
    }

    /// Marks the call's slot free.
    package func end(_ token: CrashGuardToken) {
        guard token.rawValue > 0, token.rawValue <= UInt64(slotCount) else { return }
        let slot = Int(token.rawValue - 1)
        LibPluginHost.storeStateWord(Self.stateWord(base, slot), SlotState.free)
        slots.withLock { $0.free.append(slot) }
    }

    /// The calls the earlier process left in the file (not this process's own).
    package func pending() -> [LeftoverCall] {
        let leftovers = slots.withLock { $0.leftovers }
        var calls: [LeftoverCall] = []
        for slot in leftovers {
            let word = LibPluginHost.loadStateWord(Self.stateWord(base, slot))
            let ending: CallEnding
            switch SlotState.state(word) {
            case SlotState.inCall: ending = .interrupted
            case SlotState.crashed: ending = .crashed(signal: SlotState.signal(word))
            default: continue
            }
            let address = Self.slotAddress(base, slot)
            let count = Int(address.load(fromByteOffset: 8, as: UInt32.self))
            guard count <= Self.slotSize - Self.recordOffset else { continue }
            let text = String(
                decoding: UnsafeRawBufferPointer(start: address + Self.recordOffset, count: count), as: UTF8.self)
            if let call = GuardedCall(encoded: text) { calls.append(LeftoverCall(call: call, ending: ending)) }
        }
        return calls
    }

    /// Frees the earlier process's slots.
    package func clearPending() {
        slots.withLock { state in
            for slot in state.leftovers {
                LibPluginHost.storeStateWord(Self.stateWord(base, slot), SlotState.free)
                state.free.append(slot)
            }
            state.leftovers = []
        }
    }

    private func complain(_ text: String) {
        FileDescriptor.printError("flowd: crash guard \(path): \(text)")
    }
}
