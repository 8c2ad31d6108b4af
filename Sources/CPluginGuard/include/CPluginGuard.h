// CPluginGuard: the async-signal-safe half of PluginHost's crash guard.
//
// A thread that runs a plugin call is *marked*: a thread-local pointer to that
// call's state word in the crash guard's memory-mapped file, with the value the
// word has while the call runs. Fatal-signal handlers (SIGSEGV, SIGBUS, SIGILL,
// SIGFPE, SIGABRT, SIGTRAP, SIGSYS) look at the marker of the thread the signal
// arrived on: when the signal is a fault of that thread (sent by the kernel, or
// raised by the thread itself as abort() does) they turn the word from "in call"
// to "crashed", with one compare-and-swap on mapped memory. Then they put back
// the handler that was there before (the Swift runtime's backtracer, or the
// default action) and send the signal again, so the crash report and the core
// dump still happen.
//
// Swift code calls these functions only through PluginHost's System seam.
#ifndef FLOWD_CPLUGINGUARD_H
#define FLOWD_CPLUGINGUARD_H

#include <stdint.h>

/// A slot's state word: bits 0-7 the state, 8-15 the signal that crashed the
/// call (0 while it runs), 16-63 the call's generation (unique per call).
enum {
    FLOWD_GUARD_SLOT_FREE = 0,
    FLOWD_GUARD_SLOT_IN_CALL = 1,
    FLOWD_GUARD_SLOT_CRASHED = 2,
};

/// What a thread is marked with. `word` NULL: not in a plugin call.
typedef struct flowd_guard_marker {
    /// The call's state word, in the crash guard's mapping.
    uint64_t *word;
    /// The value `word` holds while that call runs (generation and "in call").
    uint64_t expected;
} flowd_guard_marker;

/// Installs the fatal-signal handlers, once per process; later calls do
/// nothing. Returns 0, or the errno of the `sigaction` that failed.
int flowd_guard_install_handlers(void);

/// 1 when this library's handlers are installed for all its signals right now
/// (nothing replaced them), else 0.
int flowd_guard_handlers_installed(void);

/// Marks the calling thread as running the call whose state word is `word`;
/// returns the previous marker, for flowd_guard_leave.
flowd_guard_marker flowd_guard_enter(uint64_t *word, uint64_t expected);

/// Puts back the marker flowd_guard_enter returned.
void flowd_guard_leave(flowd_guard_marker previous);

/// The calling thread's marker now.
flowd_guard_marker flowd_guard_current(void);

/// An atomic store with release ordering (a state word in the mapping).
void flowd_guard_store(uint64_t *word, uint64_t value);

/// An atomic load with acquire ordering.
uint64_t flowd_guard_load(const uint64_t *word);

/// Gives the calling thread an alternate signal stack (`sigaltstack`) if it
/// has none, so that a stack overflow still runs the handlers. Nests: every
/// successful call needs one flowd_guard_altstack_release. Returns 0, or an
/// errno when no stack could be set up (the thread then runs without).
int flowd_guard_altstack_acquire(void);

/// Ends one flowd_guard_altstack_acquire; the last one removes and frees the
/// stack this library made (a stack someone else installed is left alone).
void flowd_guard_altstack_release(void);

#endif
