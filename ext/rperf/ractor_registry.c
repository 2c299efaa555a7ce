/*
 * ractor_registry.c — the calling Ractor's table slot by its main thread,
 * and the job that prepares table slots ahead.
 *
 * The job may run on a thread of any Ractor (postponed jobs are flushed
 * by whichever Ractor checks its interrupts first): preparing is the same
 * work wherever it runs. It does NOT decide which events identify a
 * thread's Ractor (gvl_hooks.c and rperf.c do).
 */
#include "ractor_registry.h"

#include <ruby.h>
#include <ruby/debug.h>

static rb_postponed_job_handle_t prepare_job = POSTPONED_JOB_HANDLE_INVALID;

static void
prepare_job_run(void *data)
{
    (void)data;
    rperf_ractor_table_prepare(RPERF_RACTORS_PREPARED_AHEAD);
}

int
rperf_ractor_prepare(void)
{
    return rperf_ractor_table_prepare(RPERF_RACTORS_PREPARED_AHEAD);
}

rperf_ractor_slot_t *
rperf_ractor_current(void)
{
    if (!rperf_ractor_table_is_open())
        return NULL;
    uintptr_t key = (uintptr_t)rb_thread_main();
    rperf_ractor_slot_t *r = rperf_ractor_table_find(key);
    if (r)
        return r;
    r = rperf_ractor_table_take(key);
    /* Taken or not, the table needs slots prepared again. */
    if (prepare_job != POSTPONED_JOB_HANDLE_INVALID)
        rb_postponed_job_trigger(prepare_job);
    return r;
}

void
rperf_ractor_registry_mark(void)
{
    int n = rperf_ractor_count();
    for (int id = 1; id <= n; id++) {
        const rperf_ractor_slot_t *r = rperf_ractor_by_id(id);
        if (r && r->key)
            rb_gc_mark((VALUE)r->key);
    }
}

void
rperf_ractor_registry_init(void)
{
    if (prepare_job == POSTPONED_JOB_HANDLE_INVALID)
        prepare_job = rb_postponed_job_preregister(0, prepare_job_run, NULL);
}
