// What Swift cannot call itself: sched_setattr has no glibc wrapper before 2.41 (the raw syscall is variadic), prctl
// is variadic, and Glibc's Swift module has neither eventfd nor ppoll.
#define _GNU_SOURCE
#include "thread_timing.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
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

int lc_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0) == 0 ? 0 : errno;
}

int lc_wake_fd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int lc_wait(int fd, long long nanoseconds) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN, .revents = 0};
    struct timespec timeout = {.tv_sec = nanoseconds / 1000000000LL, .tv_nsec = nanoseconds % 1000000000LL};
    int n = ppoll(&pfd, 1, nanoseconds < 0 ? NULL : &timeout, NULL);
    if (n <= 0) return n;
    uint64_t value;
    (void)!read(fd, &value, sizeof value);
    return 1;
}

void lc_wake(int fd) {
    uint64_t one = 1;
    (void)!write(fd, &one, sizeof one);
}
