import Glibc
import Synchronization

/// One plugin call in progress, as the crash guard records it.
public struct GuardedCall: Sendable, Hashable {
    /// The plugin file.
    public var pluginPath: String
    /// The plugin's registered name (the file name when not known yet).
    public var pluginName: String
    /// The capability being called, or nil while the loader calls the plugin's
    /// registration entry point.
    public var capability: String?
    /// When the call started, in microseconds since the epoch.
    public var startedAt: Int64

    /// Describes one call; `capability` nil means the registration entry point.
    public init(pluginPath: String, pluginName: String, capability: String?, startedAt: Int64) {
        self.pluginPath = pluginPath
        self.pluginName = pluginName
        self.capability = capability
        self.startedAt = startedAt
    }

    /// A single-line text form, for a store that keeps one string per record:
    /// `v1 TAB startedAt TAB name TAB capability TAB path`. Names never hold a
    /// tab (the loader refuses such names); the path comes last so it may.
    public var encoded: String {
        "v1\t\(startedAt)\t\(pluginName)\t\(capability ?? "")\t\(pluginPath)"
    }

    /// Reads ``encoded`` back; nil for anything else.
    public init?(encoded: String) {
        let parts = encoded.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "v1", let started = Int64(parts[1]), !parts[4].isEmpty else {
            return nil
        }
        self.init(
            pluginPath: String(parts[4]), pluginName: String(parts[2]),
            capability: parts[3].isEmpty ? nil : String(parts[3]), startedAt: started)
    }

    /// The reason shown for a plugin found in the middle of this call at start-up.
    var crashReason: String {
        let what = capability.map { "a call to \($0)" } ?? "loading"
        return "crashed the daemon during \(what) at \(System.rfc3339(microseconds: startedAt)); "
            + "disabled until its file changes"
    }
}

/// Proof that a call was recorded; hand it back to ``CrashGuard/end(_:)``.
public struct CrashGuardToken: Sendable, Hashable {
    /// The guard's own number for the record; 0 means "not recorded".
    public var rawValue: UInt64

    /// Wraps a guard's record number.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }
}

/// Remembers which plugin call is in progress, in a place that survives the
/// process dying, so that a plugin that crashes the daemon is found on the next
/// start.
///
/// The daemon implements it with its store; ``FileCrashGuard`` is a small
/// file-backed one. Implementations must be cheap: `begin` and `end` run on
/// every plugin call. They must not throw: a guard that cannot record should
/// say so in its own log and let the call run.
public protocol CrashGuard: Sendable {
    /// Records that `call` is starting. Must be durable against a crash of
    /// this process (not necessarily against power loss) before it returns.
    func begin(_ call: GuardedCall) -> CrashGuardToken
    /// Forgets the call `token` stands for.
    func end(_ token: CrashGuardToken)
    /// The calls left behind by a process that died during them.
    func pending() -> [GuardedCall]
    /// Forgets every recorded call (after start-up has dealt with them).
    func clearPending()
}

/// A crash guard that keeps nothing: for tests and tools that do not need it.
public final class MemoryCrashGuard: CrashGuard {
    private struct State {
        var next: UInt64 = 1
        var active: [UInt64: GuardedCall] = [:]
        var begun: [GuardedCall] = []
    }
    private let state = Mutex(State())

    /// An empty guard.
    public init() {}

    /// Keeps `call` in memory until ``end(_:)``.
    public func begin(_ call: GuardedCall) -> CrashGuardToken {
        state.withLock { s in
            let token = s.next
            s.next += 1
            s.active[token] = call
            s.begun.append(call)
            return CrashGuardToken(rawValue: token)
        }
    }

    /// Forgets the call.
    public func end(_ token: CrashGuardToken) {
        _ = state.withLock { $0.active.removeValue(forKey: token.rawValue) }
    }

    /// The calls begun and not ended (in memory there is no previous process,
    /// so tests use this to play one).
    public func pending() -> [GuardedCall] {
        state.withLock { Array($0.active.values) }
    }

    /// Forgets every call in progress.
    public func clearPending() {
        state.withLock { $0.active.removeAll() }
    }

    /// Every call recorded so far, in order, ended or not (for tests).
    public var begunCalls: [GuardedCall] {
        state.withLock { $0.begun }
    }

    /// The calls in progress right now.
    public var activeCalls: [GuardedCall] { pending() }
}

/// Why a ``FileCrashGuard`` could not be set up.
public struct CrashGuardError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the file.
    public var description: String
}

/// A crash guard kept in a small memory-mapped file of fixed slots.
///
/// `begin` copies the call into a free slot of a `MAP_SHARED` mapping and marks
/// it used; `end` marks it free. Both are plain memory writes, no system call:
/// the mapping *is* the page cache, so the record outlives this process the
/// moment it is written, which is what a crash guard needs (it does not have
/// to survive a power cut, so there is no `msync`). The next process maps the
/// same file and reads the used slots.
///
/// The file is created mode 0600 (`O_NOFOLLOW`), must belong to this uid, and
/// is locked with `flock` so two processes cannot share one. With more calls in
/// progress than slots, the extra calls run unrecorded (and say so on stderr).
public final class FileCrashGuard: CrashGuard, @unchecked Sendable {
    // @unchecked: `base` points into a mapping this object owns until deinit;
    // each slot is written only by the call that holds it, and the free list
    // is behind a Mutex.
    /// Slots when the caller does not say: more than calls can be in progress
    /// at once in practice (a slot is 2 KiB of a sparse file).
    public static let defaultSlotCount = 512
    static let slotSize = 2048
    static let headerSize = 4096
    static let magic: [UInt8] = Array("FLOWDCG1".utf8)

    private let fd: Int32
    private let base: UnsafeMutableRawPointer
    private let length: Int
    private let slotCount: Int
    private let path: String
    /// Free slots, and the slots a previous process left used (its calls in
    /// progress when it died).
    private let slots: Mutex<(free: [Int], leftovers: [Int])>

    /// Opens or creates the guard file at `path`. Calls recorded by an earlier
    /// process stay readable through ``pending()``.
    public init(path: String, slots: Int = FileCrashGuard.defaultSlotCount) throws(CrashGuardError) {
        let slotCount = max(1, slots)
        let length = Self.headerSize + slotCount * Self.slotSize
        let fd: Int32
        do {
            fd = try System.open(path, flags: O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode: 0o600)
        } catch {
            throw CrashGuardError(description: "\(path): cannot open: \(error)")
        }
        do {
            let status = try System.fstat(fd)
            guard status.isRegularFile, status.owner == System.effectiveUserID, !status.isWritableByGroupOrOthers
            else {
                throw CrashGuardError(
                    description: "\(path): the crash guard file must be a regular file of uid "
                        + "\(System.effectiveUserID), not writable by group or others")
            }
            try System.lockExclusively(fd)
            let fresh = status.size != Int64(length)
            if fresh { try System.truncate(fd, to: length) }
            let base = try System.mapShared(fd, length: length)
            if fresh || !Self.hasHeader(base, slotCount: slotCount) {
                // New, or written by another layout: start empty.
                base.initializeMemory(as: UInt8.self, repeating: 0, count: length)
                Self.writeHeader(base, slotCount: slotCount)
            }
            self.base = base
        } catch let e as CrashGuardError {
            System.close(fd)
            throw e
        } catch {
            System.close(fd)
            throw CrashGuardError(description: "\(path): \(error)")
        }
        self.fd = fd
        self.length = length
        self.slotCount = slotCount
        self.path = path
        // Slots in use by the previous process stay untouched until
        // clearPending(); new calls take the others.
        var available: [Int] = []
        var leftovers: [Int] = []
        for slot in stride(from: slotCount - 1, through: 0, by: -1) {
            if Self.isUsed(base, slot) { leftovers.append(slot) } else { available.append(slot) }
        }
        self.slots = Mutex((available, leftovers.reversed()))
    }

    deinit {
        System.unmap(base, length: length)
        System.close(fd)
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

    private static func isUsed(_ base: UnsafeMutableRawPointer, _ slot: Int) -> Bool {
        slotAddress(base, slot).load(as: UInt32.self) == 1
    }

    /// Writes `call` into a free slot and marks it used.
    public func begin(_ call: GuardedCall) -> CrashGuardToken {
        let bytes = Array(call.encoded.utf8)
        guard bytes.count <= Self.slotSize - 8 else {
            complain("a call record of \(bytes.count) bytes does not fit a slot")
            return CrashGuardToken(rawValue: 0)
        }
        guard let slot = slots.withLock({ $0.free.popLast() }) else {
            complain("all \(slotCount) slots are in use; this call runs unrecorded")
            return CrashGuardToken(rawValue: 0)
        }
        let address = Self.slotAddress(base, slot)
        address.storeBytes(of: UInt32(bytes.count), toByteOffset: 4, as: UInt32.self)
        (address + 8).copyMemory(from: bytes, byteCount: bytes.count)
        address.storeBytes(of: UInt32(1), as: UInt32.self)  // used: last, after the record
        return CrashGuardToken(rawValue: UInt64(slot) + 1)
    }

    /// Marks the call's slot free.
    public func end(_ token: CrashGuardToken) {
        guard token.rawValue > 0, token.rawValue <= UInt64(slotCount) else { return }
        let slot = Int(token.rawValue - 1)
        Self.slotAddress(base, slot).storeBytes(of: UInt32(0), as: UInt32.self)
        slots.withLock { $0.free.append(slot) }
    }

    /// The calls the previous process left in the file (not this process's own).
    public func pending() -> [GuardedCall] {
        let leftovers = slots.withLock { $0.leftovers }
        var calls: [GuardedCall] = []
        for slot in leftovers where Self.isUsed(base, slot) {
            let address = Self.slotAddress(base, slot)
            let count = Int(address.load(fromByteOffset: 4, as: UInt32.self))
            guard count <= Self.slotSize - 8 else { continue }
            let text = String(decoding: UnsafeRawBufferPointer(start: address + 8, count: count), as: UTF8.self)
            if let call = GuardedCall(encoded: text) { calls.append(call) }
        }
        return calls
    }

    /// Frees the previous process's slots.
    public func clearPending() {
        slots.withLock { state in
            for slot in state.leftovers {
                Self.slotAddress(base, slot).storeBytes(of: UInt32(0), as: UInt32.self)
                state.free.append(slot)
            }
            state.leftovers = []
        }
    }

    private func complain(_ text: String) {
        try? System.writeAll(2, Array("flowd: crash guard \(path): \(text)\n".utf8))
    }
}
