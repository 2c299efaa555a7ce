/*
 * ractor_registry.c — Ractor-local tokens into the Ractor table and the
 * registration job.
 *
 * The job runs on a thread of the Ractor that asked (or, if another
 * Ractor's thread flushed the shared job bits first, on that one:
 * registering is idempotent and the asking Ractor triggers again at its
 * next RESUMED). It does NOT decide when to ask (the RESUMED hook does,
 * for a thread whose Ractor is unknown).
 */
#include "ractor_registry.h"
#include "contention.h"
#include "gc_hooks.h"
#include "thread_slot.h"

#include <ruby/debug.h>
#include <ruby/ractor.h>

static rb_ractor_local_key_t ractor_key;
static rb_postponed_job_handle_t register_job = POSTPONED_JOB_HANDLE_INVALID;

rperf_ractor_slot_t *
rperf_ractor_lookup_current(void)
{
    if (!ractor_key)
        return NULL;
    return rperf_ractor_table_decode((uintptr_t)rb_ractor_local_storage_ptr(ractor_key));
}

rperf_ractor_slot_t *
rperf_ractor_register_current(void)
{
    if (!ractor_key || !rperf_contention_active())
        return NULL;
    rperf_ractor_slot_t *r = rperf_ractor_lookup_current();
    if (r)
        return r;
    uintptr_t token;
    r = rperf_ractor_table_add(&token);
    if (r)
        rb_ractor_local_storage_ptr_set(ractor_key, (void *)token);
    return r;
}

/* Outside any hook, so it may allocate. Threads of the Ractor that have no
 * further GVL event (one thread per Ractor never switches) get their
 * Ractor here. */
static void
register_job_run(void *data)
{
    (void)data;
    if (!rperf_contention_recording())
        return;
    rperf_ractor_slot_t *r = rperf_ractor_register_current();
    if (!r)
        return;
    if (!r->main)
        rperf_gc_hooks_install_current_ractor();
    VALUE threads = rb_funcall(rb_cThread, rb_intern("list"), 0);
    for (long i = 0; i < RARRAY_LEN(threads); i++) {
        rperf_thread_slot_t *slot = rperf_slot_find(RARRAY_AREF(threads, i));
        if (slot && !RPERF_LOAD(slot->ractor))
            RPERF_STORE(slot->ractor, r);
    }
}

void
rperf_ractor_registry_init(void)
{
    if (!ractor_key)
        ractor_key = rb_ractor_local_storage_ptr_newkey(NULL);
    if (register_job == POSTPONED_JOB_HANDLE_INVALID)
        register_job = rb_postponed_job_preregister(0, register_job_run, NULL);
}

void
rperf_ractor_request_registration(void)
{
    if (register_job != POSTPONED_JOB_HANDLE_INVALID)
        rb_postponed_job_trigger(register_job);
}
