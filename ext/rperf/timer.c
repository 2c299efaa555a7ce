/*
 * timer.c — worker thread driven by a POSIX timer signal or by condvar
 * deadlines. Arming/disarming from the GVL side only changes the timer
 * (signal mode) or a flag plus a condvar broadcast (condvar mode); the worker
 * never catches up missed ticks in a burst: ticks are samples, and the
 * sampler weighs samples by elapsed time, so skipping is harmless. The
 * pace (timer.h) is the worker's: the signal timer is re-armed, under the
 * mutex, only when the pace changes; arm always restarts at the interval.
 *
 * It does NOT install the signal handler Ruby threads run, and it does NOT
 * know about Ruby.
 */
#define _GNU_SOURCE 1
#include "timer.h"
#include "native_tid.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static struct {
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond; /* CLOCK_MONOTONIC; startup handshake and condvar ticks */
    int started;         /* worker thread exists */
    int ready;           /* handshake: worker finished its setup */
    const char *setup_error;
    atomic_int stop;
    atomic_int armed;
    int64_t interval_ns;
    int64_t slow_ns; /* the slow pace's period; == interval_ns when not slower */
    int slow;        /* at the slow pace now (mutex) */
    int idle_ticks;  /* idle ticks in a row (mutex); > 0: the latest tick was idle */
    int signo;       /* 0: condvar mode */
    timer_t timer_id;
    int has_timer;
    pid_t worker_tid;
    int manage_policy; /* worker only: it started as SCHED_OTHER, so it may switch */
    int batch;         /* worker only: it runs as SCHED_BATCH now */
    timer_t direct_id; /* the direct tick timer (timer.h), made by the starting thread */
    int has_direct;
    rperf_timer_callbacks_t cb;
} g_timer = {.mutex = PTHREAD_MUTEX_INITIALIZER};

static int64_t
monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec
ns_to_timespec(int64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL)};
    return ts;
}

static void
settime(timer_t id, int64_t interval_ns)
{
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (interval_ns > 0) {
        /* tv_nsec must stay below 1e9: split whole seconds (1 Hz works). */
        its.it_value = ns_to_timespec(interval_ns);
        its.it_interval = its.it_value;
    }
    timer_settime(id, 0, &its, NULL);
}

static void
set_timer(int64_t interval_ns)
{
    settime(g_timer.timer_id, interval_ns);
}

/* Armed and disarmed with the worker's ticks, always at the interval: its
 * ticks are the caller's samples, which never rest. */
static void
set_direct(int on)
{
    if (g_timer.has_direct)
        settime(g_timer.direct_id, on ? g_timer.interval_ns : 0);
}

/* The starting thread: the direct tick timer, process-directed, so that the
 * kernel picks the thread that takes each tick (timer.h). */
static int
create_direct(int signo)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = signo;
    sev.sigev_value.sival_int = RPERF_TIMER_DIRECT_VALUE;
    if (timer_create(CLOCK_MONOTONIC, &sev, &g_timer.direct_id) != 0)
        return -1;
    g_timer.has_direct = 1;
    return 0;
}

/* Worker, after a tick, mutex held: returns the period until the next tick.
 * Re-arms the signal timer when the pace changes (and only then: one
 * timer_settime per change); a disarmed timer stays disarmed. */
static int64_t
pace_locked(int idle)
{
    int want_slow = g_timer.slow;
    if (!idle) {
        g_timer.idle_ticks = 0;
        want_slow = 0;
    } else if (g_timer.idle_ticks < RPERF_TIMER_IDLE_TICKS) {
        g_timer.idle_ticks++;
    } else {
        want_slow = g_timer.slow_ns > g_timer.interval_ns;
    }
    if (want_slow != g_timer.slow) {
        g_timer.slow = want_slow;
        if (g_timer.signo > 0 && atomic_load(&g_timer.armed))
            set_timer(want_slow ? g_timer.slow_ns : g_timer.interval_ns);
    }
    return g_timer.slow ? g_timer.slow_ns : g_timer.interval_ns;
}

/* Mutex held: whether a few milliseconds' delay of the worker's next
 * wake-up would thin out nothing: its wake-ups are not sampling ticks at an
 * interval shorter than the drain's, or the latest tick found nothing to do
 * (wall mode while the GVL changes hands: the hooks sample). */
static int
wants_batch_locked(void)
{
    return !atomic_load(&g_timer.armed) || g_timer.slow || g_timer.interval_ns >= RPERF_TIMER_DRAIN_NS ||
           g_timer.idle_ticks > 0;
}

/* Worker only: applies timer.h's scheduling rule. A worker that inherited
 * another policy (a program run under chrt) keeps it; a failed switch is
 * not retried. */
static void
settle_policy(int want_batch)
{
    if (!g_timer.manage_policy || want_batch == g_timer.batch)
        return;
    struct sched_param param = {.sched_priority = 0};
    if (pthread_setschedparam(pthread_self(), want_batch ? SCHED_BATCH : SCHED_OTHER, &param) == 0)
        g_timer.batch = want_batch;
    else
        g_timer.manage_policy = 0;
}

static void
finish_setup(const char *error)
{
    pthread_mutex_lock(&g_timer.mutex);
    g_timer.setup_error = error;
    g_timer.ready = 1;
    pthread_cond_broadcast(&g_timer.cond);
    pthread_mutex_unlock(&g_timer.mutex);
}

static void
signal_loop(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, g_timer.signo);
    struct timespec drain_period = ns_to_timespec(RPERF_TIMER_DRAIN_NS);
    while (!atomic_load(&g_timer.stop)) {
        siginfo_t info;
        int got = sigtimedwait(&set, &info, &drain_period);
        if (atomic_load(&g_timer.stop))
            break;
        /* SI_TIMER: a timer expiry; anything else (our own wake-up) is not
         * a tick. */
        int want_batch;
        if (got == g_timer.signo && info.si_code == SI_TIMER && atomic_load(&g_timer.armed)) {
            int idle = g_timer.cb.tick(g_timer.cb.arg);
            pthread_mutex_lock(&g_timer.mutex);
            pace_locked(idle);
        } else {
            pthread_mutex_lock(&g_timer.mutex);
        }
        want_batch = wants_batch_locked();
        pthread_mutex_unlock(&g_timer.mutex);
        settle_policy(want_batch);
        g_timer.cb.drain(g_timer.cb.arg);
    }
}

static void
condvar_loop(void)
{
    int64_t next_tick = monotonic_ns() + g_timer.interval_ns;
    int was_armed = atomic_load(&g_timer.armed);
    pthread_mutex_lock(&g_timer.mutex);
    while (!atomic_load(&g_timer.stop)) {
        int armed = atomic_load(&g_timer.armed);
        int64_t now = monotonic_ns();
        if (armed && !was_armed) {
            next_tick = now + g_timer.interval_ns;
            g_timer.slow = 0;
            g_timer.idle_ticks = 0;
        }
        was_armed = armed;
        int64_t wake = now + RPERF_TIMER_DRAIN_NS;
        if (armed && next_tick < wake)
            wake = next_tick;
        struct timespec deadline = ns_to_timespec(wake);
        pthread_cond_timedwait(&g_timer.cond, &g_timer.mutex, &deadline);
        if (atomic_load(&g_timer.stop))
            break;
        pthread_mutex_unlock(&g_timer.mutex);
        now = monotonic_ns();
        int64_t period = 0;
        int ticked = atomic_load(&g_timer.armed) && was_armed && now >= next_tick;
        int idle = ticked ? g_timer.cb.tick(g_timer.cb.arg) : 0;
        pthread_mutex_lock(&g_timer.mutex);
        if (ticked)
            period = pace_locked(idle);
        int want_batch = wants_batch_locked();
        pthread_mutex_unlock(&g_timer.mutex);
        if (ticked) {
            next_tick += period;
            if (next_tick <= now)
                next_tick = now + period;
        }
        settle_policy(want_batch);
        g_timer.cb.drain(g_timer.cb.arg);
        pthread_mutex_lock(&g_timer.mutex);
    }
    pthread_mutex_unlock(&g_timer.mutex);
}

static void *
worker_main(void *arg)
{
    (void)arg;
    /* Named so that tools (and the tests) can tell it from Ruby's threads. */
    pthread_setname_np(pthread_self(), RPERF_TIMER_THREAD_NAME);
    g_timer.worker_tid = rperf_native_tid();
    int policy;
    struct sched_param param;
    g_timer.batch = 0;
    g_timer.manage_policy = pthread_getschedparam(pthread_self(), &policy, &param) == 0 && policy == SCHED_OTHER;
    if (g_timer.signo > 0) {
        struct sigevent sev;
        memset(&sev, 0, sizeof(sev));
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = g_timer.signo;
        sev.sigev_notify_thread_id = g_timer.worker_tid;
        if (timer_create(CLOCK_MONOTONIC, &sev, &g_timer.timer_id) != 0) {
            finish_setup("timer_create failed");
            return NULL;
        }
        g_timer.has_timer = 1;
        if (atomic_load(&g_timer.armed))
            set_timer(g_timer.interval_ns);
        finish_setup(NULL);
        signal_loop();
        timer_delete(g_timer.timer_id);
        g_timer.has_timer = 0;
    } else {
        finish_setup(NULL);
        condvar_loop();
    }
    return NULL;
}

static void
wake_worker(void)
{
    if (g_timer.signo > 0) {
        /* si_code SI_TKILL, so the loop does not count it as a tick. */
        syscall(SYS_tgkill, getpid(), g_timer.worker_tid, g_timer.signo);
    } else {
        pthread_mutex_lock(&g_timer.mutex);
        pthread_cond_broadcast(&g_timer.cond);
        pthread_mutex_unlock(&g_timer.mutex);
    }
}

int
rperf_timer_start(int64_t interval_ns, int signo, int direct_signo, int armed,
                  const rperf_timer_callbacks_t *callbacks, const char **err)
{
    pthread_condattr_t attr;
    sigset_t all, saved;
    int rc;

    if (g_timer.started) {
        *err = "timer already running";
        return -1;
    }
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&g_timer.cond, &attr);
    pthread_condattr_destroy(&attr);

    g_timer.interval_ns = interval_ns;
    g_timer.slow_ns = interval_ns > RPERF_TIMER_DRAIN_NS ? interval_ns : RPERF_TIMER_DRAIN_NS;
    g_timer.slow = 0;
    g_timer.idle_ticks = 0;
    g_timer.signo = signo;
    g_timer.cb = *callbacks;
    g_timer.ready = 0;
    g_timer.setup_error = NULL;
    atomic_store(&g_timer.stop, 0);
    atomic_store(&g_timer.armed, armed);

    /* The worker inherits a fully blocked mask: no signal of the program is
     * ever handled on it, and the timer signal waits for sigtimedwait. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    rc = pthread_create(&g_timer.thread, NULL, worker_main, NULL);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0) {
        *err = "pthread_create failed for the sampler worker";
        goto fail;
    }
    pthread_mutex_lock(&g_timer.mutex);
    while (!g_timer.ready)
        pthread_cond_wait(&g_timer.cond, &g_timer.mutex);
    pthread_mutex_unlock(&g_timer.mutex);
    if (g_timer.setup_error) {
        pthread_join(g_timer.thread, NULL);
        *err = g_timer.setup_error;
        goto fail;
    }
    if (direct_signo > 0 && create_direct(direct_signo) < 0) {
        atomic_store(&g_timer.stop, 1);
        wake_worker();
        pthread_join(g_timer.thread, NULL);
        *err = "timer_create failed for the direct ticks";
        goto fail;
    }
    g_timer.started = 1;
    if (armed)
        set_direct(1);
    return 0;
fail:
    pthread_cond_destroy(&g_timer.cond);
    return -1;
}

void
rperf_timer_stop(void)
{
    if (!g_timer.started)
        return;
    if (g_timer.has_direct) {
        timer_delete(g_timer.direct_id);
        g_timer.has_direct = 0;
    }
    atomic_store(&g_timer.stop, 1);
    wake_worker();
    pthread_join(g_timer.thread, NULL);
    pthread_cond_destroy(&g_timer.cond);
    g_timer.started = 0;
}

void
rperf_timer_arm(void)
{
    if (!g_timer.started)
        return;
    if (g_timer.signo <= 0) {
        if (!atomic_exchange(&g_timer.armed, 1)) {
            set_direct(1);
            wake_worker(); /* the loop restarts the pace */
        }
        return;
    }
    /* Under the mutex: the worker re-arms on a pace change only while armed. */
    pthread_mutex_lock(&g_timer.mutex);
    if (!atomic_exchange(&g_timer.armed, 1)) {
        g_timer.slow = 0;
        g_timer.idle_ticks = 0;
        set_timer(g_timer.interval_ns);
        set_direct(1);
    }
    pthread_mutex_unlock(&g_timer.mutex);
}

void
rperf_timer_disarm(void)
{
    if (!g_timer.started)
        return;
    if (g_timer.signo <= 0) {
        if (atomic_exchange(&g_timer.armed, 0))
            set_direct(0);
        return;
    }
    pthread_mutex_lock(&g_timer.mutex);
    if (atomic_exchange(&g_timer.armed, 0)) {
        set_timer(0);
        set_direct(0);
    }
    pthread_mutex_unlock(&g_timer.mutex);
}

void
rperf_timer_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    g_timer.mutex = fresh;
    g_timer.started = 0;
    g_timer.has_timer = 0;
    g_timer.has_direct = 0; /* POSIX timers are not inherited */
    atomic_store(&g_timer.armed, 0);
    atomic_store(&g_timer.stop, 0);
}
