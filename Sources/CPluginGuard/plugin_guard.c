// The fatal-signal handlers and thread markers of PluginHost's crash guard.
// Everything a handler touches is async-signal-safe: a thread-local read, one
// atomic compare-and-swap on mapped memory, sigaction(2) and a signal to the
// thread itself. See include/CPluginGuard.h.
#define _GNU_SOURCE
#include "CPluginGuard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/// The signals that mean "this thread did something fatal". SIGSYS is what a
/// seccomp filter with a trap action sends (a kill action cannot be caught).
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
#define FATAL_SIGNAL_COUNT (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

/// The dispositions in place before ours, indexed by signal number; written
/// once, before our handlers go in, and only read afterwards.
static struct sigaction previous_actions[NSIG];

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_error = 0;

/// The calling thread's marker. initial-exec: reading it from a signal handler
/// must not call into the dynamic linker (a lazily allocated TLS block would).
static _Thread_local flowd_guard_marker current_marker __attribute__((tls_model("initial-exec")));

/// The alternate signal stack this library made for the calling thread, if any.
static _Thread_local void *own_stack_base __attribute__((tls_model("initial-exec")));
static _Thread_local size_t own_stack_length __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned altstack_depth __attribute__((tls_model("initial-exec")));

/// True when `info` describes a fault of the receiving thread: the kernel sent
/// it (si_code > 0: a bad access, a trap instruction, a seccomp trap), or this
/// process sent it to this thread (SI_TKILL from our own pid: abort(),
/// raise()). kill(1), the watchdog's SIGABRT and systemd's signals arrive with
/// SI_USER or from another pid: those are not the plugin's doing.
static int is_own_fault(const siginfo_t *info) {
    if (info == NULL) return 0;
    if (info->si_code > 0) return 1;
    return info->si_code == SI_TKILL && info->si_pid == getpid();
}

static void on_fatal_signal(int signal_number, siginfo_t *info, void *context) {
    (void)context;
    int saved_errno = errno;
    flowd_guard_marker marker = current_marker;
    if (marker.word != NULL && is_own_fault(info)) {
        // Only the call this thread is in, and only while it is still in it:
        // a stale marker (the call ended, the slot went to another call) no
        // longer matches the word, and nothing is written.
        uint64_t expected = marker.expected;
        uint64_t crashed = (expected & ~(uint64_t)0xFFFF) | ((uint64_t)(signal_number & 0xFF) << 8)
            | FLOWD_GUARD_SLOT_CRASHED;
        __atomic_compare_exchange_n(marker.word, &expected, crashed, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
    }
    // Hand the signal on: put back what was there before us and send the same
    // signal, with the same details, to this thread. It is blocked while we
    // run, so it arrives as this handler returns, at the disposition restored
    // here: the Swift runtime's backtracer, or the default action's core dump.
    sigaction(signal_number, &previous_actions[signal_number], NULL);
    pid_t pid = getpid();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (info == NULL || syscall(SYS_rt_tgsigqueueinfo, pid, tid, signal_number, info) != 0) {
        syscall(SYS_tgkill, pid, tid, signal_number);
    }
    errno = saved_errno;
}

static void install_handlers(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    // Read every previous disposition before installing any handler, so a
    // signal during installation finds its previous action already saved.
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        if (sigaction(fatal_signals[i], NULL, &previous_actions[fatal_signals[i]]) != 0) {
            install_error = errno;
            return;
        }
    }
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        if (sigaction(fatal_signals[i], &action, NULL) != 0 && install_error == 0) install_error = errno;
    }
}

int flowd_guard_install_handlers(void) {
    pthread_once(&install_once, install_handlers);
    return install_error;
}

int flowd_guard_handlers_installed(void) {
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        struct sigaction now;
        if (sigaction(fatal_signals[i], NULL, &now) != 0) return 0;
        if (!(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_fatal_signal) return 0;
    }
    return 1;
}

flowd_guard_marker flowd_guard_enter(uint64_t *word, uint64_t expected) {
    flowd_guard_marker previous = current_marker;
    // Clear, then set the value, then the word: a signal in between sees no
    // marker or a complete one, never a word with another call's value.
    current_marker.word = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    current_marker.expected = expected;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    current_marker.word = word;
    return previous;
}

void flowd_guard_leave(flowd_guard_marker previous) {
    flowd_guard_enter(previous.word, previous.expected);
}

flowd_guard_marker flowd_guard_current(void) {
    return current_marker;
}

void flowd_guard_store(uint64_t *word, uint64_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

uint64_t flowd_guard_load(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Room for our handler and for the one we chain to (the Swift backtracer's
/// sets up SIGSTKSZ + 16 KiB for itself), with margin.
static size_t altstack_size(size_t page) {
    size_t size = 64 * 1024;
    long minimum = -1;
#ifdef _SC_SIGSTKSZ
    minimum = sysconf(_SC_SIGSTKSZ);  // glibc 2.34 and later: what this CPU needs
#endif
    if (minimum > 0) size += (size_t)minimum;
    else size += SIGSTKSZ;
    return (size + page - 1) / page * page;
}

int flowd_guard_altstack_acquire(void) {
    if (altstack_depth > 0) {
        altstack_depth++;
        return 0;
    }
    stack_t now;
    if (sigaltstack(NULL, &now) != 0) return errno;
    if (!(now.ss_flags & SS_DISABLE) && now.ss_sp != NULL) {
        // The thread has one already (the Swift runtime gives the main thread
        // one when backtracing is on): use it, and leave it alone later.
        own_stack_base = NULL;
        altstack_depth = 1;
        return 0;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = altstack_size(page);
    // One inaccessible page below the stack: a handler that overflows it
    // faults instead of writing over whatever lies below.
    void *base = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (base == MAP_FAILED) return errno;
    if (mprotect(base, page, PROT_NONE) != 0) {
        int error = errno;
        munmap(base, size + page);
        return error;
    }
    stack_t stack = {.ss_sp = (char *)base + page, .ss_flags = 0, .ss_size = size};
    if (sigaltstack(&stack, NULL) != 0) {
        int error = errno;
        munmap(base, size + page);
        return error;
    }
    own_stack_base = base;
    own_stack_length = size + page;
    altstack_depth = 1;
    return 0;
}

void flowd_guard_altstack_release(void) {
    if (altstack_depth == 0) return;
    if (--altstack_depth > 0) return;
    if (own_stack_base == NULL) return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    stack_t now;
    if (sigaltstack(NULL, &now) != 0) return;
    if (now.ss_flags & SS_ONSTACK) return;  // never pull a stack from under a running handler
    if (!(now.ss_flags & SS_DISABLE) && now.ss_sp == (char *)own_stack_base + page) {
        stack_t off = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
        if (sigaltstack(&off, NULL) != 0) return;
    }
    munmap(own_stack_base, own_stack_length);
    own_stack_base = NULL;
    own_stack_length = 0;
}
