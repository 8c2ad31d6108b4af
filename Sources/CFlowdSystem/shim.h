#pragma once
// The C declarations FlowdSystem and Reactor need that Swift's Glibc module
// leaves out: Linux-only headers (epoll, eventfd, timerfd, signalfd), glibc
// functions declared only under _GNU_SOURCE, and the wait-status macros.
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
#include <spawn.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>

// <pthread.h>, _GNU_SOURCE: a thread's name (15 bytes and a NUL at most).
extern int pthread_setname_np(pthread_t thread, const char *name);
// <unistd.h>, _GNU_SOURCE: pipe(2) with O_CLOEXEC set atomically.
extern int pipe2(int pipefd[2], int flags);
// <spawn.h>, _GNU_SOURCE (glibc 2.34): close every descriptor from `from` up in the child.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

// <spawn.h>, _GNU_SOURCE (glibc 2.26): the child calls setsid(2).
#define FLOWD_POSIX_SPAWN_SETSID 0x80

// <sys/wait.h>: the status macros, which Swift does not import.
static inline int flowd_wait_exited(int status) { return WIFEXITED(status); }
static inline int flowd_wait_exit_status(int status) { return WEXITSTATUS(status); }
static inline int flowd_wait_signaled(int status) { return WIFSIGNALED(status); }
static inline int flowd_wait_term_signal(int status) { return WTERMSIG(status); }
