#pragma once
// The C declarations FlowdSystem and Reactor need that Swift's Glibc module
// leaves out: Linux-only headers (epoll, eventfd, timerfd, signalfd), glibc
// functions declared only under _GNU_SOURCE, and the wait-status macros; and
// the one piece of C of the module's own, the spawn of a child process
// (spawn.c), which must run between clone and exec where Swift cannot.
//
// _GNU_SOURCE itself is not defined: it would change other declarations (the
// GNU strerror_r returns char *) and clash with the Glibc module's. The few
// GNU functions are declared here one by one, exactly as glibc declares them.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <signal.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>

// <pthread.h>, _GNU_SOURCE: a thread's name (15 bytes and a NUL at most).
extern int pthread_setname_np(pthread_t thread, const char *name);
// <unistd.h>, _GNU_SOURCE: pipe(2) with O_CLOEXEC set atomically.
extern int pipe2(int pipefd[2], int flags);
// <string.h>, _GNU_SOURCE: a signal's name without "SIG" ("TERM"); NULL for
// a number without one.
extern const char *sigabbrev_np(int sig);
// One step a child takes between clone and exec, in order (spawn.c).
// open(path, flags, mode) and move the result to `fd`.
#define FLOWD_SPAWN_OPEN 1
// dup2(source, fd); with source == fd, clear fd's close-on-exec flag.
#define FLOWD_SPAWN_DUP2 2
// close every descriptor from `fd` up.
#define FLOWD_SPAWN_CLOSE_FROM 3

typedef struct {
    int kind;
    int fd;
    int source;
    const char *path;
    int flags;
    unsigned int mode;
} flowd_spawn_action;

// What to start and how (see flowd_spawn).
typedef struct {
    const char *path;
    char *const *argv;
    char *const *envp;
    // Look `path` up in PATH (execvpe) when it has no slash.
    int search_path;
    const flowd_spawn_action *actions;
    int action_count;
    int new_session;
    int new_process_group;
    // The signal the child gets when the thread that spawned it ends
    // (PR_SET_PDEATHSIG); 0 for none.
    int death_signal;
} flowd_spawn_request;

// Which step of the child failed (flowd_spawn's `failed_step`).
#define FLOWD_SPAWN_STEP_NONE 0
#define FLOWD_SPAWN_STEP_CLONE 1
#define FLOWD_SPAWN_STEP_SETSID 2
#define FLOWD_SPAWN_STEP_SETPGID 3
#define FLOWD_SPAWN_STEP_PDEATHSIG 4
#define FLOWD_SPAWN_STEP_OPEN 5
#define FLOWD_SPAWN_STEP_DUP2 6
#define FLOWD_SPAWN_STEP_CLOSE_FROM 7
#define FLOWD_SPAWN_STEP_EXEC 8

// Starts a child as `request` says: clone(CLONE_VM | CLONE_VFORK) with every
// signal blocked, then in the child every signal handler back to its default,
// setsid, setpgid, PR_SET_PDEATHSIG, the actions in order, an empty signal
// mask, and exec. Returns 0 with the child's pid in `*pid`, or an errno with
// the step that failed in `*failed_step` (and, for an action, its index in
// `*failed_action`); a child that failed has been reaped.
int flowd_spawn(const flowd_spawn_request *request, int *pid, int *failed_step, int *failed_action);

// pidfd_open(2): a descriptor that becomes readable when process `pid` ends
// (close-on-exec). -1 with errno on failure.
int flowd_pidfd_open(int pid);

// <sys/wait.h>: the status macros, which Swift does not import.
static inline int flowd_wait_exited(int status) { return WIFEXITED(status); }
static inline int flowd_wait_exit_status(int status) { return WEXITSTATUS(status); }
static inline int flowd_wait_signaled(int status) { return WIFSIGNALED(status); }
static inline int flowd_wait_term_signal(int status) { return WTERMSIG(status); }

// Installs a seccomp filter that refuses (EPERM) socket(2) for every family
// but AF_UNIX, and io_uring_setup(2), after PR_SET_NO_NEW_PRIVS (sandbox.c).
// 0, or -1 with errno.
int flowd_sandbox_refuse_network(void);
// prctl(PR_SET_NO_NEW_PRIVS, 1): 0, or -1 with errno (prctl is variadic,
// which Swift cannot call).
int flowd_sandbox_no_new_privs(void);
