#pragma once
// Linux headers the Reactor needs that Swift's Glibc module does not import.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>

// Declared by <pthread.h> only under _GNU_SOURCE.
extern int pthread_setname_np(pthread_t thread, const char *name);
