// The one seam through which PluginHost calls C: the dynamic loader
// (`dlopen(3)`, `dlsym(3)`, `dlerror(3)`) and CPluginGuard (the fatal-signal
// handlers, the per-thread "in a plugin call" marker, atomic access to a
// crash-guard slot's state word and the alternate signal stack). Everything
// else the module needs from the system (files, mappings, threads, locks,
// signals, clocks) comes from FlowdSystem.
import CPluginGuard
import FlowdSystem
import Glibc

/// What a thread running a plugin call is marked with: the call's state word
/// in a ``FileCrashGuard`` mapping and the value the word has while the call
/// runs. A fatal signal on a marked thread turns the word to "crashed".
struct FaultMarker: @unchecked Sendable, Hashable {
    // @unchecked: the pointer is only handed to C, which touches the word
    // atomically; the mapping outlives every marker (see CallExecutor).
    /// The state word.
    var word: UnsafeMutablePointer<UInt64>
    /// The word's value while the call runs.
    var expected: UInt64
}

/// The states of a slot's state word, and its layout: bits 0–7 the state,
/// 8–15 the fatal signal, 16–63 the call's generation.
enum SlotState {
    static let free = UInt64(FLOWD_GUARD_SLOT_FREE)
    static let inCall = UInt64(FLOWD_GUARD_SLOT_IN_CALL)
    static let crashed = UInt64(FLOWD_GUARD_SLOT_CRASHED)
    /// Generations have 48 bits.
    static let generationMask: UInt64 = (1 << 48) - 1

    /// The word of a call in progress.
    static func inCall(generation: UInt64) -> UInt64 {
        ((generation & generationMask) << 16) | inCall
    }

    /// The state part of `word`.
    static func state(_ word: UInt64) -> UInt64 { word & 0xFF }

    /// The signal part of `word` (0 when none was recorded).
    static func signal(_ word: UInt64) -> Int32 { Int32((word >> 8) & 0xFF) }
}

/// The C calls of PluginHost, each wrapping one function.
enum LibPluginHost {
    /// `dlopen(3)` with `RTLD_NOW | RTLD_LOCAL`. On failure returns the
    /// `dlerror(3)` text.
    static func dlopen(_ path: String) -> Result<UnsafeMutableRawPointer, DynamicLoaderError> {
        _ = Glibc.dlerror()
        if let handle = Glibc.dlopen(path, RTLD_NOW | RTLD_LOCAL) { return .success(handle) }
        return .failure(DynamicLoaderError(message: lastDynamicLoaderError))
    }

    /// `dlsym(3)`: nil when the symbol does not exist.
    static func dlsym(_ handle: UnsafeMutableRawPointer, _ symbol: String) -> UnsafeMutableRawPointer? {
        _ = Glibc.dlerror()
        return Glibc.dlsym(handle, symbol)
    }

    /// `dlerror(3)`, or a fixed text when it has nothing to say.
    private static var lastDynamicLoaderError: String {
        guard let text = Glibc.dlerror() else { return "unknown dynamic loader error" }
        return String(cString: text)
    }

    /// `flowd_guard_install_handlers`: installs the crash guard's handlers for
    /// SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP and SIGSYS once per
    /// process, after (and chaining to) whatever was there, such as the Swift
    /// runtime's backtracer.
    static func installFaultHandlers() throws(Errno) {
        let error = flowd_guard_install_handlers()
        guard error == 0 else { throw Errno(rawValue: error) }
    }

    /// `flowd_guard_handlers_installed`: whether the handlers are in place for
    /// every one of their signals (nothing has replaced them since).
    static var faultHandlersInstalled: Bool { flowd_guard_handlers_installed() != 0 }

    /// `flowd_guard_enter`: marks the calling thread as running the call
    /// `marker` stands for; returns the previous marker for ``leaveCall(_:)``.
    static func enterCall(_ marker: FaultMarker) -> flowd_guard_marker {
        flowd_guard_enter(marker.word, marker.expected)
    }

    /// `flowd_guard_leave`: puts back the marker ``enterCall(_:)`` returned.
    static func leaveCall(_ previous: flowd_guard_marker) {
        flowd_guard_leave(previous)
    }

    /// `flowd_guard_current`: the calling thread's marker, nil when it is not
    /// in a plugin call.
    static var currentFaultMarker: FaultMarker? {
        let current = flowd_guard_current()
        guard let word = current.word else { return nil }
        return FaultMarker(word: word, expected: current.expected)
    }

    /// `flowd_guard_store`: an atomic store (release) of a state word.
    static func storeStateWord(_ word: UnsafeMutablePointer<UInt64>, _ value: UInt64) {
        flowd_guard_store(word, value)
    }

    /// `flowd_guard_load`: an atomic load (acquire) of a state word.
    static func loadStateWord(_ word: UnsafeMutablePointer<UInt64>) -> UInt64 {
        flowd_guard_load(word)
    }

    /// `flowd_guard_altstack_acquire`: gives the calling thread an alternate
    /// signal stack (`sigaltstack(2)`) unless it has one, so a stack overflow
    /// still runs the handlers. Pair every success with
    /// ``releaseAlternateSignalStack()``.
    static func acquireAlternateSignalStack() throws(Errno) {
        let error = flowd_guard_altstack_acquire()
        guard error == 0 else { throw Errno(rawValue: error) }
    }

    /// `flowd_guard_altstack_release`: ends one ``acquireAlternateSignalStack()``;
    /// the last one removes and frees the stack it made.
    static func releaseAlternateSignalStack() {
        flowd_guard_altstack_release()
    }
}

/// A failure reported by `dlopen(3)`, with `dlerror(3)`'s text.
struct DynamicLoaderError: Error, Sendable {
    var message: String
}
