// The sandbox a process puts itself in (flowd-plugin-host, before it loads an
// isolated plugin): in C because a seccomp filter is a BPF program of
// struct sock_filter, built from the kernel's macros.
//
// The filter needs no namespace and no privilege (PR_SET_NO_NEW_PRIVS first),
// so it works the same under the system unit (RestrictNamespaces=yes, no
// capabilities) and the per-user unit. It refuses with EPERM, never kills:
// the plugin sees an error it can report.
#define _GNU_SOURCE
#include "shim.h"

#include <errno.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define FLOWD_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FLOWD_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "flowd's sandbox knows x86_64 and aarch64 only"
#endif

#define FLOWD_REFUSE (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int flowd_sandbox_refuse_network(void) {
    struct sock_filter program[] = {
        // Another architecture's system call numbers mean other calls: refuse.
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FLOWD_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
        // x32 system calls on x86_64 carry this bit: refuse them all.
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, FLOWD_REFUSE),
#endif
        // io_uring could open sockets without socket(2).
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, FLOWD_REFUSE),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        // socket(domain, …): only AF_UNIX (the low 32 bits of the first argument).
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, FLOWD_REFUSE),
    };
    struct sock_fprog filter = {
        .len = (unsigned short)(sizeof(program) / sizeof(program[0])),
        .filter = program,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    // prctl, not seccomp(2): systemd's @system-service allows prctl
    // (@process) but not the seccomp system call.
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0);
}

int flowd_sandbox_no_new_privs(void) {
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}
