#ifndef LIVECONTROLS_THREAD_TIMING_H
#define LIVECONTROLS_THREAD_TIMING_H

/// Asks the kernel to schedule the calling thread in slices of `nanoseconds` (sched_setattr's sched_runtime for the
/// fair policies, Linux 6.12 and later, 100 µs to 100 ms), keeping its policy and nice value: under EEVDF a waking
/// thread with a shorter slice than the running one preempts it instead of waiting for that one's slice (~3 ms) to
/// end. Needs no privilege. Returns 0 when the slice is in effect, -1 when the kernel took the request but does not
/// use it (before 6.12), or the errno of a refusal.
int lc_request_slice(unsigned long long nanoseconds);

/// Puts the calling thread in SCHED_FIFO at `priority` (needs CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least
/// `priority`): it then runs as soon as it wakes, before every ordinary thread. Returns 0, or the errno of a refusal.
int lc_request_fifo(int priority);

/// An eventfd for `lc_wait` / `lc_wake` (close-on-exec, non-blocking), or -1 with errno set.
int lc_wake_fd(void);

/// A timerfd on CLOCK_MONOTONIC for `lc_wait` (close-on-exec, non-blocking), or -1 with errno set.
int lc_timer_fd(void);

/// Sleeps until `fd` is woken (`lc_wake`, then reset) or `nanoseconds` have passed (negative: no time limit), timed by
/// `timer` (from `lc_timer_fd`), with no slack. Returns 1 when woken, 0 when the time ran out, -1 on an error (EINTR
/// included).
int lc_wait(int fd, int timer, long long nanoseconds);

/// Wakes a thread in `lc_wait` on `fd` (or makes its next wait return at once).
void lc_wake(int fd);

#endif
