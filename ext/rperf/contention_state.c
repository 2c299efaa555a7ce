/*
 * contention_state.c — the profile's contention state and the accessors
 * the hooks read it with (contention_state.h states the rules).
 *
 * It does NOT change the state: contention.c and contention_events.c do.
 */
#include "contention_state.h"
#include "clock.h"

rperf_contention_state_t rperf_run = {.label_mutex = PTHREAD_MUTEX_INITIALIZER};

int
rperf_contention_active(void)
{
    return rperf_run.active && !rperf_run.forked_child;
}

int
rperf_contention_recording(void)
{
    /* seq_cst: pairs with rperf_contention_stop_recording and the pinned
     * hook's in-flight count; a plain load on x86. */
    return __atomic_load_n(&rperf_run.recording, __ATOMIC_SEQ_CST);
}

int
rperf_contention_forked_child_pending(void)
{
    return rperf_run.active && rperf_run.forked_child;
}

const rperf_contention_config_t *
rperf_contention_config(void)
{
    return &rperf_run.cfg;
}

int64_t
rperf_contention_clip_ns(void)
{
    return __atomic_load_n(&rperf_run.clip_ns, __ATOMIC_RELAXED);
}

uint32_t
rperf_contention_epoch(void)
{
    return __atomic_load_n(&rperf_run.epoch, __ATOMIC_RELAXED);
}

int64_t
rperf_contention_now_clipped(void)
{
    int64_t now = rperf_now_ns();
    int64_t clip = rperf_contention_clip_ns();
    return now < clip ? clip : now;
}
