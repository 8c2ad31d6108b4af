// The spawn of a child process, in C because the child's side runs between
// clone and exec: in memory shared with this process (CLONE_VM), on a stack
// of its own, where only async-signal-safe system calls are allowed. Swift
// code there could allocate, take a lock another thread holds, or run a
// signal handler of the parent.
//
// Why not posix_spawn(3): it cannot set PR_SET_PDEATHSIG in the child, and a
// child that outlives a killed daemon runs a submit action a second time when
// the person retries. glibc's posix_spawn is itself clone(CLONE_VM |
// CLONE_VFORK) plus these steps; this is the same with one more.
#define _GNU_SOURCE
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern int execvpe(const char *file, char *const argv[], char *const envp[]);

typedef struct {
    const flowd_spawn_request *request;
    pid_t parent;
    // Written by the child before it exits without exec; the parent reads
    // them once clone returns (CLONE_VFORK: after the child exec'd or exited).
    volatile int error;
    volatile int step;
    volatile int action;
} spawn_context;

// The child's side runs on its own stack in shared memory: no sanitizer
// bookkeeping there (AddressSanitizer would take it for a stack overflow).
#define CHILD_SIDE __attribute__((no_sanitize("address", "undefined")))

CHILD_SIDE static int fail(spawn_context *context, int step, int action) {
    context->error = errno ? errno : EINVAL;
    context->step = step;
    context->action = action;
    _exit(127);
}

CHILD_SIDE static int close_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) == 0) return 0;
    if (errno != ENOSYS && errno != EPERM) return -1;
#endif
    // Without close_range (Linux before 5.9, or a filter that refuses it).
    long limit = sysconf(_SC_OPEN_MAX);
    if (limit < 0 || limit > 65536) limit = 65536;
    for (int fd = first; fd < limit; fd++) close(fd);
    return 0;
}

CHILD_SIDE static int child_main(void *raw) {
    spawn_context *context = raw;
    const flowd_spawn_request *request = context->request;

    // Every handler back to its default: the handlers are the parent's code,
    // and an ignored signal stays ignored across exec. (glibc's own two
    // internal signals refuse; that is fine.)
    struct sigaction fallback;
    for (int i = 0; i < (int)sizeof fallback; i++) ((char *)&fallback)[i] = 0;
    fallback.sa_handler = SIG_DFL;
    for (int signal = 1; signal < _NSIG; signal++) {
        if (signal == SIGKILL || signal == SIGSTOP) continue;
        sigaction(signal, &fallback, NULL);
    }

    if (request->new_session && setsid() < 0) return fail(context, FLOWD_SPAWN_STEP_SETSID, -1);
    if (request->new_process_group && setpgid(0, 0) < 0) return fail(context, FLOWD_SPAWN_STEP_SETPGID, -1);
    if (request->death_signal) {
        if (prctl(PR_SET_PDEATHSIG, (unsigned long)request->death_signal, 0, 0, 0) < 0) {
            return fail(context, FLOWD_SPAWN_STEP_PDEATHSIG, -1);
        }
        // The parent may have died before the request took effect: then
        // nobody would send the signal.
        if (getppid() != context->parent) _exit(127);
    }

    for (int i = 0; i < request->action_count; i++) {
        const flowd_spawn_action *action = &request->actions[i];
        switch (action->kind) {
        case FLOWD_SPAWN_OPEN: {
            int fd = open(action->path, action->flags, (mode_t)action->mode);
            if (fd < 0) return fail(context, FLOWD_SPAWN_STEP_OPEN, i);
            if (fd != action->fd) {
                if (dup2(fd, action->fd) < 0) return fail(context, FLOWD_SPAWN_STEP_OPEN, i);
                close(fd);
            }
            break;
        }
        case FLOWD_SPAWN_DUP2:
            if (action->source == action->fd) {
                int flags = fcntl(action->fd, F_GETFD);
                if (flags < 0 || fcntl(action->fd, F_SETFD, flags & ~FD_CLOEXEC) < 0) {
                    return fail(context, FLOWD_SPAWN_STEP_DUP2, i);
                }
            } else if (dup2(action->source, action->fd) < 0) {
                return fail(context, FLOWD_SPAWN_STEP_DUP2, i);
            }
            break;
        case FLOWD_SPAWN_CLOSE_FROM:
            if (close_from(action->fd) < 0) return fail(context, FLOWD_SPAWN_STEP_CLOSE_FROM, i);
            break;
        default:
            errno = EINVAL;
            return fail(context, FLOWD_SPAWN_STEP_DUP2, i);
        }
    }

    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (request->search_path) {
        execvpe(request->path, request->argv, request->envp);
    } else {
        execve(request->path, request->argv, request->envp);
    }
    return fail(context, FLOWD_SPAWN_STEP_EXEC, -1);
}

int flowd_spawn(const flowd_spawn_request *request, int *pid, int *failed_step, int *failed_action) {
    *failed_step = FLOWD_SPAWN_STEP_NONE;
    *failed_action = -1;
    // The child's stack: room for exec's own needs (execvpe builds the
    // candidate paths, and a script's argument vector, on the stack).
    size_t argument_count = 0;
    while (request->argv[argument_count]) argument_count++;
    size_t size = 256 * 1024 + argument_count * sizeof(char *);
    void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) {
        *failed_step = FLOWD_SPAWN_STEP_CLONE;
        return errno;
    }

    // No handler of this process may run in the child, which shares its
    // memory until exec: block everything across the clone.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);

    spawn_context context = {.request = request, .parent = getpid(), .error = 0, .step = 0, .action = -1};
    int child = clone(child_main, (char *)stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, &context);
    int clone_error = errno;

    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    munmap(stack, size);

    if (child < 0) {
        *failed_step = FLOWD_SPAWN_STEP_CLONE;
        return clone_error;
    }
    if (context.error != 0) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        *failed_step = context.step;
        *failed_action = context.action;
        return context.error;
    }
    *pid = child;
    return 0;
}

int flowd_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    // pidfd_open has no close-on-exec flag: its descriptors always are.
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
