// What Swift cannot call itself: sched_setattr has no glibc wrapper before 2.41 (the raw syscall is variadic), and
// Glibc's Swift module has neither eventfd nor timerfd.
#define _GNU_SOURCE
#include "thread_timing.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct lc_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

int lc_request_slice(unsigned long long nanoseconds) {
#if defined(SYS_sched_setattr) && defined(SYS_sched_getattr)
    // Only the slice changes: the thread's policy, nice value and flags stay what they are (a process started with
    // `nice` keeps its nice value; raising it back to 0 would need a privilege).
    struct lc_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return errno;
    attr.size = sizeof attr;
    attr.sched_flags = 0;
    attr.sched_runtime = nanoseconds;
    if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) return errno;
    // Kernels before 6.12 accept the value for these policies and ignore it; from 6.12 on it reads back.
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return errno;
    return attr.sched_runtime == nanoseconds ? 0 : -1;
#else
    (void)nanoseconds;
    return ENOSYS;
#endif
}

int lc_request_fifo(int priority) {
    struct sched_param param = {.sched_priority = priority};
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
}

int lc_wake_fd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int lc_timer_fd(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
}

// A timerfd, not poll's own timeout: the kernel gives poll and select a slack of 0.1% of their timeout whatever the
// thread's timer slack (100 µs late on a 100 ms wait); a timerfd's timer has none.
int lc_wait(int fd, int timer, long long nanoseconds) {
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    if (nanoseconds >= 0) {
        if (nanoseconds == 0) nanoseconds = 1;  // 0 would disarm it
        when.it_value.tv_sec = nanoseconds / 1000000000LL;
        when.it_value.tv_nsec = nanoseconds % 1000000000LL;
    }
    if (timerfd_settime(timer, 0, &when, NULL) != 0) return -1;
    struct pollfd pfds[2] = {{.fd = fd, .events = POLLIN, .revents = 0}, {.fd = timer, .events = POLLIN, .revents = 0}};
    int n = poll(pfds, 2, -1);
    if (n <= 0) return n;
    uint64_t value;
    if (pfds[1].revents & POLLIN) (void)!read(timer, &value, sizeof value);
    if (pfds[0].revents & POLLIN) {
        (void)!read(fd, &value, sizeof value);
        return 1;
    }
    return 0;
}

void lc_wake(int fd) {
    uint64_t one = 1;
    (void)!write(fd, &one, sizeof one);
}
