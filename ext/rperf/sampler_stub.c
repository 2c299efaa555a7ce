/*
 * sampler_stub.c — the sampler's interface for a build without the sampler
 * (RPERF_EXT_WITHOUT=sampler, or its sources missing): compiled instead of
 * sampler.c, timer.c, sample_buffer.c, frame_table.c, agg_table.c and
 * release_stacks.c.
 *
 * A profile then has exact contention totals, a timeline and wait edges,
 * but no stacks: start succeeds and starts nothing, the hooks' recorders
 * return at once, and the report gets the synthetic frames alone (so frame
 * ids keep their meaning) and empty stack, sample and blame arrays. It does
 * NOT refuse sampler options: Rperf::HAVE_SAMPLER tells the Ruby side.
 */
#include "sampler.h"
#include "report_format.h"

#include <string.h>

int
rperf_sampler_supported(void)
{
    return 0;
}

int
rperf_sampler_start(const rperf_sampler_opts_t *opts, const char **err)
{
    (void)opts;
    (void)err;
    return 0;
}

int
rperf_sampler_running(void)
{
    return 0;
}
void
rperf_sampler_stop(void)
{
}
void
rperf_sampler_free(void)
{
}
void
rperf_sampler_pause(void)
{
}
void
rperf_sampler_resume(void)
{
}
int
rperf_sampler_paused(void)
{
    return 0;
}
void
rperf_sampler_reset_slot_clock(struct rperf_thread_slot *slot)
{
    (void)slot;
}

void
rperf_sampler_record_synthetic(struct rperf_thread_slot *slot, VALUE thread, enum rperf_synthetic_frame frame,
                               int64_t weight_ns)
{
    (void)slot;
    (void)thread;
    (void)frame;
    (void)weight_ns;
}

void
rperf_sampler_record_resumed(struct rperf_thread_slot *slot, VALUE thread, int64_t now_ns, int64_t blocked_ns,
                             int64_t wait_ns)
{
    (void)slot;
    (void)thread;
    (void)now_ns;
    (void)blocked_ns;
    (void)wait_ns;
}

void
rperf_sampler_gc_span_begin(struct rperf_thread_slot *slot)
{
    (void)slot;
}
void
rperf_sampler_record_exited(struct rperf_thread_slot *slot, int64_t now_ns)
{
    (void)slot;
    (void)now_ns;
}

void
rperf_sampler_record_release(const struct rperf_thread_slot *waiter, const struct rperf_release_event *release)
{
    (void)waiter;
    (void)release;
}
void
rperf_sampler_each_release_stack(uint32_t generation, rperf_release_stack_fn *fn, void *arg)
{
    (void)generation;
    (void)fn;
    (void)arg;
}
void
rperf_sampler_flush(void)
{
}
void
rperf_sampler_clear(void)
{
}

void
rperf_sampler_get_stats(rperf_sampler_stats_t *out)
{
    memset(out, 0, sizeof(*out));
}

void
rperf_sampler_fill_report(VALUE report)
{
    static const char *const paths[RPERF_SYNTHETIC_FRAMES] = RPERF_SYNTHETIC_FRAME_PATHS;
    static const char *const labels[RPERF_SYNTHETIC_FRAMES] = RPERF_SYNTHETIC_FRAME_LABELS;
    VALUE frames = rb_ary_new();
    for (int i = 0; i < RPERF_SYNTHETIC_FRAMES; i++)
        rb_ary_push(frames, rb_ary_new3(2, rb_str_new_cstr(paths[i]), rb_str_new_cstr(labels[i])));
    rb_hash_aset(report, rb_str_new_cstr("frames"), frames);
    rb_hash_aset(report, rb_str_new_cstr("stacks"), rb_ary_new());
    rb_hash_aset(report, rb_str_new_cstr("samples"), rb_ary_new());
    rb_hash_aset(report, rb_str_new_cstr("blame"), rb_ary_new());
}

void
rperf_sampler_mark(void)
{
}
void
rperf_sampler_before_fork(void)
{
}
void
rperf_sampler_after_fork_parent(void)
{
}
void
rperf_sampler_after_fork_child(void)
{
}
