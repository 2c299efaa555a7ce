/*
 * timer.h — the sampler's worker thread and its clock: either a POSIX timer
 * (timer_create on CLOCK_MONOTONIC) whose real-time signal is delivered to the
 * worker thread only (SIGEV_THREAD_ID) and consumed with sigtimedwait, or,
 * without signals, a condition-variable wait on CLOCK_MONOTONIC deadlines.
 *
 * It does NOT know what a tick does: the worker calls `tick` once per
 * interval while armed, and `drain` after every wake-up (at least every
 * RPERF_TIMER_DRAIN_NS, armed or not), both on the worker thread, which is
 * not a Ruby thread (no GVL, no Ruby calls).
 *
 * Pace: `tick` returns 1 when it found nothing to do. After
 * RPERF_TIMER_IDLE_TICKS such ticks in a row the worker ticks every
 * RPERF_TIMER_DRAIN_NS instead (when that is longer than the interval),
 * until a tick returns 0: then at once back to the interval. Ticks are
 * samples weighed by elapsed time, so at the slow pace a thread that
 * starts needing ticks gets its first sample up to RPERF_TIMER_DRAIN_NS
 * late, weighing the whole time since its previous one: no weight is lost.
 *
 * Scheduling (the one statement of this rule): while its wake-ups are not
 * ticks at an interval shorter than RPERF_TIMER_DRAIN_NS (the slow pace,
 * disarmed, or 100 Hz and slower), or its latest tick found nothing to do,
 * the worker runs as SCHED_BATCH. Woken, it then waits for the thread on
 * the CPU (a Ruby thread holding its GVL) to block or end its slice. On one
 * busy CPU, each preemption of a GVL holder set off a chain of woken
 * threads that found the GVL taken and slept again. After a tick that
 * acted, the worker is SCHED_OTHER. Only a preempting worker's tick lands
 * at a random moment of the holder's run: a batch worker ran once the
 * holder blocked, so its sample found the next holder just back from its
 * wait, and on a saturated CPU it ticked too seldom. So a caller whose
 * ticks must sample running threads fairly (cpu mode) makes every tick
 * act. A worker that did not start as SCHED_OTHER keeps its policy.
 * docs/performance.md ("The resting worker as SCHED_BATCH") has the figures.
 *
 * Direct ticks (direct_signo > 0): a second POSIX timer on CLOCK_MONOTONIC,
 * process-directed, sends direct_signo with si_value RPERF_TIMER_DIRECT_VALUE
 * once per interval while armed; no thread wakes to send it. Since Linux 6.3
 * the kernel gives such a signal to the thread its interrupt stopped, when
 * that thread belongs to the process and does not block the signal: the
 * running GVL holder takes its own tick without a context switch. Otherwise
 * (an idle CPU, older kernels) the kernel wakes a thread of its choice, as
 * the worker's tick would. The worker then only drains and ticks for what
 * the caller's tick still does; the caller's handler takes the direct ticks.
 *
 * Contract
 * - One timer per process. start/stop/arm/disarm are called by the sampler
 *   with the GVL held (main Ractor); they never call the callbacks.
 * - start returns 0, or -1 with *err set; on failure no thread or timer is
 *   left behind. stop wakes and joins the worker; callbacks have returned
 *   when it returns.
 * - Intervals of one second or more are valid (frequency 1 Hz).
 * - The signal, when used, is blocked in the worker; every other thread keeps
 *   its mask (the sampler installs the handler other threads run).
 */
#ifndef RPERF_TIMER_H
#define RPERF_TIMER_H

#include <stdint.h>
#include <sys/types.h>

#define RPERF_TIMER_DRAIN_NS 10000000LL         /* 10 ms */
#define RPERF_TIMER_IDLE_TICKS 16               /* idle ticks in a row before the slow pace */
#define RPERF_TIMER_THREAD_NAME "rperf-sampler" /* the worker's comm (at most 15 chars) */
#define RPERF_TIMER_DIRECT_VALUE 0x72706764     /* si_value.sival_int of a direct tick */

typedef struct rperf_timer_callbacks {
    int (*tick)(void *arg); /* 1: nothing to do (see Pace), 0: acted */
    void (*drain)(void *arg);
    void *arg;
} rperf_timer_callbacks_t;

/* signo > 0: the worker's ticks come from a signal timer (else condvar
 * deadlines); it must differ from direct_signo, which a worker waiting in
 * sigtimedwait would take. direct_signo > 0: direct ticks (above). */
int rperf_timer_start(int64_t interval_ns, int signo, int direct_signo, int armed,
                      const rperf_timer_callbacks_t *callbacks, const char **err);
void rperf_timer_stop(void);
void rperf_timer_arm(void);
void rperf_timer_disarm(void);
/* Fork child: the worker and the timer do not exist here; forget them
 * without joining or deleting. */
void rperf_timer_after_fork_child(void);

#endif
