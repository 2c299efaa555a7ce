/*
 * thread_slot.h — the preallocated pool of per-thread state.
 *
 * Every Ruby thread the profiler sees gets one slot, claimed lazily on its
 * first GVL/GC event (or at start for threads that already exist) and found
 * again through the thread-specific key (rb_internal_thread_specific_*).
 * Slots are allocated once when a profile starts and are never freed or
 * reused while it runs, so threads that exit keep their numbers in the
 * result. This file does NOT decide what the states mean or how time is
 * charged (contention.h does) and keeps nothing of the sampler's (its
 * per-thread state is its own array, indexed by seq); it only owns storage,
 * claiming and iteration.
 *
 * Contract
 * - rperf_slot_pool_create/destroy: GVL held (main Ractor), never from hooks.
 *   destroy clears the thread-specific pointer of every slot's thread.
 * - rperf_slot_find(thread): any context, never allocates; NULL when the
 *   thread has no slot in the current pool.
 * - rperf_slot_claim(thread, now): any context including hooks (no malloc,
 *   no Ruby calls): returns the thread's slot, claiming a fresh one with one
 *   atomic fetch_add; NULL when the pool is full (counted in dropped_threads).
 * - One writer per slot: the events of one thread are sequential, so the
 *   hook handling them is the only writer of the contention fields. Readers
 *   on other threads (snapshot, stop) use rperf_slot_read() (a seqlock),
 *   which retries while a hook is mid-update.
 * - rperf_slots_foreach: visits the published slots in seq order; GVL held.
 */
#ifndef RPERF_THREAD_SLOT_H
#define RPERF_THREAD_SLOT_H

#include <ruby.h>
#include <ruby/thread.h>
#include <stdint.h>

/* State numbers are those of report.json intervals (enum rperf_state). */
#include "report_format.h"
#include "ractor_table.h" /* RPERF_CACHE_LINE; slots point at their Ractor */

/* Blocked time per method the thread was blocked in (cause_table.h ids).
 * Index 0 of a slot's list is "unknown" (no frame, Ruby code, or a full
 * table); the list only grows, so an index names one method for the whole
 * profile. Sized for the few methods one thread waits in; a method beyond
 * it is charged to index 0 and counted as a dropped cause. */
#define RPERF_SLOT_BLOCK_METHODS 24
/* Release edges per waiter (releaser, both label sets, method index); a
 * release beyond them stays unattributed (release_unknown_ns). */
#define RPERF_SLOT_RELEASES 16
/* Leaf frames remembered per thread with their method index: a thread
 * mostly alternates between a few waits (a pipe ping-pong blocks in
 * IO#write, then IO#read), and each remembered one skips the cause table
 * probe at SUSPENDED. */
#define RPERF_SLOT_LEAF_CACHE 2

typedef struct rperf_blocked_method {
    uint32_t frame; /* cause table id; 0 for index 0 */
    uint32_t count; /* blocked spans begun in it */
    int64_t ns;
} rperf_blocked_method_t;

typedef struct rperf_release {
    int32_t releaser; /* thread seq */
    int32_t releaser_label;
    int32_t waiter_label;
    int32_t method; /* index into the waiter's blocked methods */
    int64_t ns;
    uint64_t count;
} rperf_release_t;

/* A consistent copy of a slot's accounting, taken by rperf_slot_read(). */
typedef struct rperf_slot_view {
    int state;
    int exited;
    int64_t state_since_ns;
    int64_t first_seen_ns;
    int64_t last_seen_ns;
    int64_t ready_ns;
    int64_t timeline_from_ns;
    int64_t totals[RPERF_STATE_COUNT];
    uint64_t acquisitions;
    uint64_t waits;
    int64_t runnable_ns;                        /* the READY that last ended a blocked span, 0: none */
    int64_t runnable_totals[RPERF_STATE_COUNT]; /* totals at that READY */
    int block_method;                           /* index of the open (or last) blocked span's method */
    int ready_releaser;                         /* releaser the last READY found, 0 if none */
    int nmethods;
    int nreleases;
    rperf_blocked_method_t methods[RPERF_SLOT_BLOCK_METHODS];
    rperf_release_t releases[RPERF_SLOT_RELEASES];
} rperf_slot_view_t;

/* Cache-line aligned: each thread's hooks write only its own slot, and two
 * threads' slots never share a line (no false sharing between CPUs). */
typedef struct rperf_thread_slot {
    /* ---- identity, read by every part ---- */
    int seq;          /* 1-based, = index + 1 */
    int label_set_id; /* current label set; written by the thread itself */
    VALUE thread;     /* the Ruby Thread; kept alive by the profiler's mark */

    /* ---- contention accounting: written only by this thread's events ---- */
    uint32_t version; /* seqlock: odd while a writer is mid-update */
    int state;        /* enum rperf_state after the last event */
    int exited;
    int64_t state_since_ns; /* when `state` began (clipped to resume/start) */
    int64_t first_seen_ns;
    int64_t last_seen_ns;
    int64_t totals[RPERF_STATE_COUNT];
    uint64_t acquisitions;
    uint64_t waits;
    int64_t ready_ns; /* READY time of the wait in progress, 0 if none */
    /* The thread's totals when it last became runnable after blocking (a
     * READY that ended a blocked span): a unit of work that starts later
     * (a request read from a socket) can tell the GVL wait and running
     * that came before it since its data arrived. */
    int64_t runnable_ns;
    int64_t runnable_totals[RPERF_STATE_COUNT];
    int64_t ready_blocked_ns;             /* blocked time the last READY closed (sampler weight) */
    int64_t timeline_from_ns;             /* start of the next timeline interval (coalescing) */
    uint64_t hook_events;                 /* events handled for this thread */
    int64_t native_id;                    /* OS thread id seen at a RESUMED, 0 if unknown */
    rperf_ractor_slot_t *ractor;          /* NULL until identified; never changes after */
    rperf_ractor_slot_t *waiting_counted; /* Ractor whose waiters count includes us */
    int gc_depth;                         /* inside a GC enter/exit bracket */
    /* Blocked causes, seqlock'd like the totals. The blocked time and spans
     * of the method in progress are not added to its entry at every event:
     * they are totals[BLOCKED] - method_mark_ns and blocked_spans -
     * span_mark, moved into the entry when the thread blocks in another
     * method (rperf_slot_read adds them back). So a thread that keeps
     * blocking in one method writes only this line and the totals' ones. */
    int block_method;       /* method index of the blocked span in progress */
    int ready_releaser;     /* seq of the thread that readied this one, 0 if none */
    uint32_t blocked_spans; /* SUSPENDED events: blocked spans begun */
    /* ---- written when the method changes ---- */
    VALUE leaf_cache[RPERF_SLOT_LEAF_CACHE]; /* leaf frames classified lately (pinned cause table keys) ... */
    int leaf_method[RPERF_SLOT_LEAF_CACHE];  /* ... and their method indexes */
    int leaf_next;                           /* the entry the next new leaf replaces */
    int nmethods;                            /* methods[0] is "unknown"; 0 means 1 */
    int nreleases;
    uint32_t span_mark;     /* blocked_spans when block_method began */
    int64_t method_mark_ns; /* totals[BLOCKED] when block_method began */
    rperf_blocked_method_t methods[RPERF_SLOT_BLOCK_METHODS];
    rperf_release_t releases[RPERF_SLOT_RELEASES];

    /* ---- wait time no edge could name (unknown Ractor, full table); atomic,
     * emptied by the result builder ---- */
    int64_t unknown_edge_ns;
    uint64_t unknown_edge_count;

    /* ---- written only by the result builder / label switch (mutex held) ---- */
    int64_t base_totals[RPERF_STATE_COUNT]; /* snapshot(clear) baselines */
    uint64_t base_acquisitions;
    uint64_t base_waits;
    uint64_t base_hook_events;
    /* Where the last clearing cut stopped counting this thread: the cut's
     * end, its exit, or its view's last event when that came after the
     * cut's clock read (the cutting thread was preempted before the views).
     * The next report counts the thread from here. 0: no clearing cut. */
    int64_t counted_to_ns;
    int64_t label_base[RPERF_STATE_COUNT]; /* totals already flushed to label_totals */
    int64_t base_method_ns[RPERF_SLOT_BLOCK_METHODS];
    uint32_t base_method_count[RPERF_SLOT_BLOCK_METHODS];
    int64_t base_release_ns[RPERF_SLOT_RELEASES];
    uint64_t base_release_count[RPERF_SLOT_RELEASES];
    int64_t label_base_method_ns[RPERF_SLOT_BLOCK_METHODS];
    int published; /* 1 once the slot is initialised (release) */
} __attribute__((aligned(RPERF_CACHE_LINE))) rperf_thread_slot_t;

/* Relaxed access for fields that one thread writes while another reads. */
#define RPERF_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define RPERF_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

int rperf_slot_pool_create(int capacity, const char **err);
void rperf_slot_pool_destroy(void);
int rperf_slot_pool_active(void);
int rperf_slot_count(void);        /* slots claimed so far */
uint64_t rperf_slot_dropped(void); /* claims refused because the pool was full */
void rperf_slot_pool_reset_dropped(void);
void rperf_slot_pool_mark(void); /* rb_gc_mark every slot's thread */
/* Fork child: forget the pool without touching other threads' state. */
void rperf_slot_pool_abandon(void);

/* Process-wide key, created once at Init (max 8 per process). */
void rperf_slot_key_init(void);

rperf_thread_slot_t *rperf_slot_find(VALUE thread);
rperf_thread_slot_t *rperf_slot_claim(VALUE thread, int64_t now_ns);
rperf_thread_slot_t *rperf_slot_by_seq(int seq); /* NULL when unpublished */

void rperf_slots_foreach(void (*fn)(rperf_thread_slot_t *, void *), void *arg);

/* Seqlock around an update of the accounting fields. The version is made
 * odd by a sequentially consistent CAS from even (a load after it cannot
 * pass it; see rperf_event_write_begin): the thread's own hooks are its usual writer, but
 * a resume (rperf_contention_resume) rebases the other threads of its
 * Ractor while one of them may be in READY (which runs without any GVL).
 * Two plain increments there could lose one and leave the version odd for
 * good: every reader, a report's included, would then spin forever with
 * the GVL held. So a writer waits out another's short section instead. */
static inline void
rperf_slot_write_begin(rperf_thread_slot_t *slot)
{
    uint32_t v = __atomic_load_n(&slot->version, __ATOMIC_RELAXED);
    for (;;) {
        if (!(v & 1) &&
            __atomic_compare_exchange_n(&slot->version, &v, v + 1, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            break;
        __builtin_ia32_pause();
        v = __atomic_load_n(&slot->version, __ATOMIC_RELAXED);
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void
rperf_slot_write_end(rperf_thread_slot_t *slot)
{
    __atomic_store_n(&slot->version, slot->version + 1, __ATOMIC_RELEASE);
}

/* Consistent copy of the accounting fields (retries while a writer is busy). */
void rperf_slot_read(const rperf_thread_slot_t *slot, rperf_slot_view_t *out);
/* The same without the releases (nreleases 0): what a thread's counters and
 * label flushes read, several times a logged request. */
void rperf_slot_read_counts(const rperf_thread_slot_t *slot, rperf_slot_view_t *out);
/* The same, retrying at most `tries` times; then the fields as they are
 * (a version left odd by writers that raced never becomes even). Returns
 * nonzero when the copy is consistent. For readers that must not wait. */
int rperf_slot_read_within(const rperf_thread_slot_t *slot, rperf_slot_view_t *out, long tries);

#endif
