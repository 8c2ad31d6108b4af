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
    public var rawValue: UInt64

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

    public init() {}

    public func begin(_ call: GuardedCall) -> CrashGuardToken {
        state.withLock { s in
            let token = s.next
            s.next += 1
            s.active[token] = call
            s.begun.append(call)
            return CrashGuardToken(rawValue: token)
        }
    }

    public func end(_ token: CrashGuardToken) {
        _ = state.withLock { $0.active.removeValue(forKey: token.rawValue) }
    }

    public func pending() -> [GuardedCall] {
        state.withLock { Array($0.active.values) }
    }

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
    public var description: String
}

/// A crash guard that keeps one small file per call in progress in a directory
/// of its own.
///
/// `begin` writes `<pid>-<n>.call` with `O_CREAT|O_EXCL` and `end` unlinks it.
/// No fsync: the record has to survive this *process* crashing, and the page
/// cache does that; surviving a power cut is not the point. The directory is
/// created 0700 and must belong to this uid.
public final class FileCrashGuard: CrashGuard {
    /// The open guard directory; closed in `deinit`.
    private let directory: Int32
    private let path: String
    private let counter = Atomic<UInt64>(1)
    private let pid: Int32

    /// Opens (creating if needed) the guard directory `path`.
    public init(directory path: String) throws(CrashGuardError) {
        do {
            try System.makeDirectory(path, mode: 0o700)
            let dir = try FileDescriptor(path: path, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            let status = try dir.status()
            guard status.owner == System.effectiveUserID, !status.isWritableByGroupOrOthers else {
                throw CrashGuardError(
                    description: "\(path): the crash guard directory must belong to uid "
                        + "\(System.effectiveUserID) and not be writable by group or others")
            }
            self.directory = dir.release()
        } catch let e as CrashGuardError {
            throw e
        } catch {
            throw CrashGuardError(description: "\(path): \(error)")
        }
        self.path = path
        self.pid = System.processID
    }

    deinit {
        System.close(directory)
    }

    private func fileName(_ token: UInt64) -> String { "\(pid)-\(token).call" }

    public func begin(_ call: GuardedCall) -> CrashGuardToken {
        var failure: Errno?
        // A file of the same name can be left over from an earlier process that
        // had the same pid (a container's daemon often does): take the next number.
        for _ in 0..<8 {
            let token = counter.wrappingAdd(1, ordering: .relaxed).oldValue
            do {
                let fd = try System.openAt(
                    directory, fileName(token), flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    mode: 0o600)
                let file = FileDescriptor(owning: fd)
                defer { file.close() }
                try System.writeAll(file.rawValue, Array(call.encoded.utf8))
                return CrashGuardToken(rawValue: token)
            } catch {
                failure = error
                if error != Errno.exists { break }
            }
        }
        // Failing to record must not stop the call; the only loss is the
        // protection after a crash. Say so on stderr.
        let line = "flowd: crash guard: cannot record a call in \(path): \(failure.map(String.init(describing:)) ?? "?")\n"
        try? System.writeAll(2, Array(line.utf8))
        return CrashGuardToken(rawValue: 0)
    }

    public func end(_ token: CrashGuardToken) {
        guard token.rawValue != 0 else { return }
        try? System.unlink(directory, fileName(token.rawValue))
    }

    public func pending() -> [GuardedCall] {
        guard let names = try? System.directoryEntries(directory) else { return [] }
        var calls: [GuardedCall] = []
        for name in names.sorted() where name.hasSuffix(".call") {
            guard
                let fd = try? System.openAt(directory, name, flags: O_RDONLY | O_NOFOLLOW | O_CLOEXEC),
                case let file = FileDescriptor(owning: fd),
                let bytes = try? System.readAll(file.rawValue, limit: 64 * 1024),
                let call = GuardedCall(encoded: String(decoding: bytes, as: UTF8.self))
            else { continue }
            calls.append(call)
        }
        return calls
    }

    public func clearPending() {
        guard let names = try? System.directoryEntries(directory) else { return }
        for name in names where name.hasSuffix(".call") {
            try? System.unlink(directory, name)
        }
    }
}
