/* analysis_gen_report.c — writes a synthetic but consistent report.json (v1).
 *
 * Used by the analysis tests, the fuzz seed corpus and the benchmarks, so the
 * analysis can be exercised at any size without running the profiler. It
 * simulates Ractors sharing one slice grid: in each slice one runnable thread
 * per Ractor holds that Ractor's GVL (or GC runs on it, or the GVL is in
 * hand-off), the other runnable threads wait, and the rest are blocked. From
 * that it derives every table of the format, so the invariants hold exactly:
 * per-thread states sum to the lifetime, edges of a waiter sum to its
 * gvl_wait_ns, label totals sum to thread totals, ids all resolve.
 * It does not model sampling noise or clock granularity.
 *
 * --causes writes a minor-1 report: a thread's consecutive slices in one
 * state and label set are one interval (as the profiler writes them), and
 * a blocked interval that ends when its thread becomes runnable was, seven
 * times in ten, released by the thread that ran in its Ractor just before
 * (mutex, queue, condvar or join); the others are io or sleep. Blocked
 * causes per thread and label row, interval_causes and blocked_edges follow,
 * so the minor-1 laws hold exactly too, and wait chains form.
 *
 * usage: rga_gen_report [--threads N] [--ractors R] [--labels L] [--slices S]
 *                       [--size MB] [--seed X] [--start-ns T] [--seq N]
 *                       [--pid P] [--drops] [--causes] [-o FILE]
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP_STACKS 24
#define STACK_KINDS 5 /* plain, [GVL wait], [GVL blocked], [GC marking], [GC sweeping] */
#define N_APP_FRAMES 40

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t
rnd(void)
{
    /* xorshift64*: reproducible across platforms for a given --seed. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static uint64_t
rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

typedef struct gthread {
    int64_t first_seen, last_seen;
    int64_t state_ns[5];
    int64_t acquisitions, waits;
    int ractor;
    int label_set;
    int app_stack;
    bool runnable, alive, started, ended;
    int last_state;  /* -1 none */
    int last_holder; /* holder slot waited on last slice, -1 none */
    int64_t start_slice, end_slice;
    /* --causes: the interval being extended, and blocked time by cause */
    bool pend;
    int pend_state, pend_label, pend_stack;
    int64_t pend_start, pend_end;
    int64_t cause_ns[10];
} gthread_t;

/* --causes: the intervals, written sorted by start once all are made. */
typedef struct giv {
    int64_t start, end;
    int thread, state, label, stack, cause, releaser; /* releaser: thread index + 1, 0 none */
} giv_t;

static giv_t *givs;
static size_t n_givs, cap_givs;

typedef struct edge_slot {
    bool used;
    int waiter, holder, wls, hls; /* holder: thread index, or nthreads (gc) / nthreads+1 (handoff) */
    int64_t wait_ns, count;
} edge_slot_t;

static edge_slot_t *edge_table;
static size_t edge_cap, edge_used;
/* --causes: release edges in the same kind of table (holder = releaser * 16
 * + cause), swapped in while they are added. */
static edge_slot_t *release_table;
static size_t release_cap, release_used;

static edge_slot_t *edge_get(int waiter, int holder, int wls, int hls);

/* Doubles the table when it is 70% full so probing always ends. */
static void
edge_grow(void)
{
    edge_slot_t *old = edge_table;
    size_t old_cap = edge_cap;
    edge_cap *= 2;
    edge_table = calloc(edge_cap, sizeof(*edge_table));
    if (!edge_table) {
        perror("rga_gen_report");
        exit(70);
    }
    edge_used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used)
            *edge_get(old[i].waiter, old[i].holder, old[i].wls, old[i].hls) = old[i];
    free(old);
}

static edge_slot_t *
edge_get(int waiter, int holder, int wls, int hls)
{
    if ((edge_used + 1) * 10 > edge_cap * 7)
        edge_grow();
    uint64_t h = ((uint64_t)waiter * 1000003u) ^ ((uint64_t)holder * 7919u) ^ ((uint64_t)wls << 40) ^
                 ((uint64_t)hls << 48);
    h *= 0x9E3779B97F4A7C15ull;
    for (size_t i = (size_t)(h >> 20) & (edge_cap - 1);; i = (i + 1) & (edge_cap - 1)) {
        edge_slot_t *e = &edge_table[i];
        if (!e->used) {
            *e = (edge_slot_t){true, waiter, holder, wls, hls, 0, 0};
            edge_used++;
            return e;
        }
        if (e->waiter == waiter && e->holder == holder && e->wls == wls && e->hls == hls)
            return e;
    }
}

static void
usage(void)
{
    fprintf(stderr, "usage: rga_gen_report [--threads N] [--ractors R] [--labels L] [--slices S] [--size MB]\n"
                    "                      [--seed X] [--start-ns T] [--seq N] [--pid P] [--drops] [--causes]\n"
                    "                      [-o FILE]\n");
    exit(64);
}

static void
swap_tables(void)
{
    edge_slot_t *t = edge_table;
    size_t c = edge_cap, u = edge_used;
    edge_table = release_table;
    edge_cap = release_cap;
    edge_used = release_used;
    release_table = t;
    release_cap = c;
    release_used = u;
}

enum { C_IO = 1, C_SLEEP = 2, C_MUTEX = 3, C_CONDVAR = 4, C_QUEUE = 5, C_JOIN = 6, N_CAUSES = 10 };
static const char *const cause_names[N_CAUSES] = {"unknown", "io",   "sleep",  "mutex",   "condvar",
                                                  "queue",   "join", "ractor", "process", "other"};

/* --causes: the interval thread t was extending ends; runnable_now says it
 * ends because t became runnable, released (perhaps) by the thread that ran
 * in its Ractor just before (run_holder, -1 none, in label set run_label).
 * Blocked time by cause goes to cause_ns and ltc (per thread and label). */
static void
flush_interval(gthread_t *th, int t, bool runnable_now, int run_holder, int run_label, int64_t *ltc, int nlabels)
{
    gthread_t *g = &th[t];
    if (!g->pend)
        return;
    g->pend = false;
    giv_t v = {g->pend_start, g->pend_end, t, g->pend_state, g->pend_label, g->pend_stack, -1, 0};
    if (v.state == 2) {
        if (runnable_now && run_holder >= 0 && run_holder != t && rnd_below(10) < 7) {
            static const int releasable[4] = {C_MUTEX, C_QUEUE, C_CONDVAR, C_JOIN};
            v.cause = releasable[rnd_below(4)];
            v.releaser = run_holder + 1;
            swap_tables();
            edge_slot_t *e = edge_get(t, run_holder * 16 + v.cause, g->pend_label, run_label);
            e->wait_ns += v.end - v.start;
            e->count++;
            swap_tables();
        } else {
            v.cause = rnd_below(2) ? C_IO : C_SLEEP;
        }
        g->cause_ns[v.cause] += v.end - v.start;
        ltc[((size_t)t * (size_t)nlabels + (size_t)v.label) * N_CAUSES + (size_t)v.cause] += v.end - v.start;
    }
    if (n_givs == cap_givs) {
        cap_givs = cap_givs ? cap_givs * 2 : 4096;
        givs = realloc(givs, cap_givs * sizeof(*givs));
        if (!givs) {
            perror("rga_gen_report");
            exit(70);
        }
    }
    givs[n_givs++] = v;
}

/* ,"blocked_by_cause":{...} of the nonzero causes (and "release_unknown_ns":0:
 * every releasable wait here has a releaser). */
static void
write_causes(FILE *out, const int64_t *cause_ns, bool release_unknown)
{
    fprintf(out, ",\"blocked_by_cause\":{");
    bool any = false;
    for (int c = 0; c < N_CAUSES; c++)
        if (cause_ns[c]) {
            fprintf(out, "%s\"%s\":%" PRId64, any ? "," : "", cause_names[c], cause_ns[c]);
            any = true;
        }
    fputc('}', out);
    if (release_unknown)
        fprintf(out, ",\"release_unknown_ns\":0");
}

static int
cmp_giv(const void *a, const void *b)
{
    const giv_t *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->thread - y->thread;
}

int
main(int argc, char **argv)
{
    int nthreads = 8, nractors = 1, nlabels = 4;
    long long slices = 2000, start_ns = 1000000000LL, sequence = 0, pid = 4242;
    double size_mb = 0;
    bool drops = false, causes = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--drops") == 0) {
            drops = true;
            continue;
        }
        if (strcmp(a, "--causes") == 0) {
            causes = true;
            continue;
        }
        if (!v)
            usage();
        if (strcmp(a, "--threads") == 0)
            nthreads = atoi(v);
        else if (strcmp(a, "--ractors") == 0)
            nractors = atoi(v);
        else if (strcmp(a, "--labels") == 0)
            nlabels = atoi(v);
        else if (strcmp(a, "--slices") == 0)
            slices = atoll(v);
        else if (strcmp(a, "--size") == 0)
            size_mb = atof(v);
        else if (strcmp(a, "--seed") == 0)
            rng_state ^= (uint64_t)strtoull(v, NULL, 0) * 0x2545F4914F6CDD1Dull;
        else if (strcmp(a, "--start-ns") == 0)
            start_ns = atoll(v);
        else if (strcmp(a, "--seq") == 0)
            sequence = atoll(v);
        else if (strcmp(a, "--pid") == 0)
            pid = atoll(v);
        else if (strcmp(a, "-o") == 0)
            path = v;
        else
            usage();
        i++;
    }
    if (nthreads < 1 || nthreads > 4096 || nractors < 1 || nractors > nthreads || nlabels < 1 || nlabels > 1000 ||
        slices < 1)
        usage();
    if (size_mb > 0) /* ~29 bytes per interval, one interval per thread per slice */
        slices = (long long)(size_mb * 1e6 / 29.0 / nthreads) + 1;
    FILE *out = path ? fopen(path, "w") : stdout;
    FILE *iv = tmpfile();
    if (!out || !iv) {
        perror("rga_gen_report");
        return 74;
    }
    edge_cap = 1;
    while (edge_cap < (size_t)nthreads * 64 + 1024)
        edge_cap <<= 1;
    edge_table = calloc(edge_cap, sizeof(*edge_table));
    gthread_t *th = calloc((size_t)nthreads, sizeof(*th));
    size_t nstacks = APP_STACKS * STACK_KINDS;
    int64_t *samples = calloc((size_t)nthreads * nstacks * (size_t)nlabels, sizeof(int64_t));
    int64_t *blame = calloc((size_t)nthreads * nstacks * (size_t)nlabels, sizeof(int64_t));
    int64_t *ltot = calloc((size_t)nthreads * (size_t)nlabels * 5, sizeof(int64_t));
    int *holder_of = calloc((size_t)nractors + 1, sizeof(int));
    /* --causes: who ran in each Ractor the slice before, and in which label set */
    int *ran_before = calloc((size_t)nractors + 1, sizeof(int)),
        *ran_label = calloc((size_t)nractors + 1, sizeof(int));
    int64_t *ltc = calloc((size_t)nthreads * (size_t)nlabels * N_CAUSES, sizeof(int64_t));
    release_cap = edge_cap;
    release_table = calloc(release_cap, sizeof(*release_table));
    if (!edge_table || !th || !samples || !blame || !ltot || !holder_of || !ran_before || !ran_label || !ltc ||
        !release_table) {
        perror("rga_gen_report");
        return 70;
    }
    for (int r = 0; r <= nractors; r++)
        ran_before[r] = -1;
    for (int t = 0; t < nthreads; t++) {
        th[t].ractor = 1 + t % nractors;
        /* Thread 0 of each Ractor lives throughout; others start and end at random. */
        bool whole = t < nractors;
        th[t].start_slice = whole ? 0 : (int64_t)rnd_below((uint64_t)slices / 4 + 1);
        th[t].end_slice = whole ? slices : slices - (int64_t)rnd_below((uint64_t)slices / 4 + 1);
        if (th[t].end_slice <= th[t].start_slice)
            th[t].end_slice = th[t].start_slice + 1;
        th[t].app_stack = (int)rnd_below(APP_STACKS);
        th[t].runnable = true;
        th[t].last_state = -1;
        th[t].last_holder = -1;
        th[t].label_set = (int)rnd_below((uint64_t)nlabels);
    }
    int64_t now = 0;
    long long n_intervals = 0;
    bool first_iv = true;
    for (long long s = 0; s < slices; s++) {
        int64_t d = 20000 + (int64_t)rnd_below(400000); /* 20µs .. 420µs */
        for (int t = 0; t < nthreads; t++) {
            gthread_t *g = &th[t];
            g->alive = s >= g->start_slice && s < g->end_slice;
            if (!g->alive)
                continue;
            if (!g->started) {
                g->started = true;
                g->first_seen = now;
            }
            if (rnd_below(100) < 8)
                g->runnable = !g->runnable;
            if (rnd_below(100) < 2)
                g->label_set = (int)rnd_below((uint64_t)nlabels);
            if (rnd_below(100) < 5)
                g->app_stack = (int)rnd_below(APP_STACKS);
        }
        for (int r = 1; r <= nractors; r++) {
            /* Pick the holder among runnable threads of r; -1 none, -2 hand-off. */
            int candidates = 0;
            for (int t = r - 1; t < nthreads; t += nractors)
                candidates += th[t].alive && th[t].runnable;
            int holder = -1;
            if (candidates > 0) {
                if (candidates > 1 && rnd_below(100) < 3) {
                    holder = -2;
                } else {
                    int pick = (int)rnd_below((uint64_t)candidates);
                    for (int t = r - 1; t < nthreads; t += nractors)
                        if (th[t].alive && th[t].runnable && pick-- == 0) {
                            holder = t;
                            break;
                        }
                }
            }
            holder_of[r] = holder;
            int gc_state = holder >= 0 && rnd_below(100) < 4 ? (rnd_below(2) ? 3 : 4) : -1;
            int nwait = 0;
            for (int t = r - 1; t < nthreads; t += nractors)
                nwait += th[t].alive && th[t].runnable && t != holder;
            for (int t = r - 1; t < nthreads; t += nractors) {
                gthread_t *g = &th[t];
                if (!g->alive)
                    continue;
                int state;
                int slot = -1;
                if (t == holder) {
                    state = gc_state >= 0 ? gc_state : 0;
                    if (g->last_state != 0 && g->last_state != 3 && g->last_state != 4)
                        g->acquisitions++;
                } else if (g->runnable) {
                    state = 1;
                    if (g->last_state != 1)
                        g->waits++;
                    slot = holder == -2 ? nthreads + 1 : gc_state >= 0 ? nthreads : holder;
                    int hls = holder >= 0 ? th[holder].label_set : 0;
                    edge_slot_t *e = edge_get(t, slot, g->label_set, hls);
                    e->wait_ns += d;
                    if (g->last_state != 1 || g->last_holder != slot)
                        e->count++;
                } else {
                    state = 2;
                }
                g->last_state = state;
                g->last_holder = slot;
                g->state_ns[state] += d;
                ltot[((size_t)t * (size_t)nlabels + (size_t)g->label_set) * 5 + (size_t)state] += d;
                static const int kind_of_state[5] = {0, 1, 2, 3, 4};
                int stack = g->app_stack * STACK_KINDS + kind_of_state[state];
                samples[((size_t)t * nstacks + (size_t)stack) * (size_t)nlabels + (size_t)g->label_set] += d;
                if (t == holder && nwait > 0)
                    blame[((size_t)t * nstacks + (size_t)stack) * (size_t)nlabels + (size_t)g->label_set] += d *
                                                                                                             nwait;
                if (causes) {
                    if (g->pend && (g->pend_state != state || g->pend_label != g->label_set))
                        flush_interval(th, t, state != 2, ran_before[r], ran_label[r], ltc, nlabels);
                    if (!g->pend) {
                        g->pend = true;
                        g->pend_state = state;
                        g->pend_label = g->label_set;
                        g->pend_stack = rnd_below(50) ? stack : -1;
                        g->pend_start = now;
                    }
                    g->pend_end = now + d;
                    continue;
                }
                fprintf(iv, "%s\n[%d,%d,%" PRId64 ",%" PRId64 ",%d,%d]", first_iv ? "" : ",", t + 1, state, now,
                        now + d, g->label_set, rnd_below(50) ? stack : -1);
                first_iv = false;
                n_intervals++;
            }
            ran_before[r] = holder >= 0 && gc_state < 0 ? holder : -1;
            ran_label[r] = holder >= 0 ? th[holder].label_set : 0;
        }
        now += d;
        for (int t = 0; t < nthreads; t++)
            if (th[t].alive && s + 1 == th[t].end_slice) {
                th[t].last_seen = now;
                th[t].ended = true;
                flush_interval(th, t, false, -1, 0, ltc, nlabels);
            }
    }
    int64_t duration = now;
    for (int t = 0; t < nthreads; t++)
        flush_interval(th, t, false, -1, 0, ltc, nlabels);
    if (causes) {
        qsort(givs, n_givs, sizeof(*givs), cmp_giv);
        n_intervals = (long long)n_givs;
        for (size_t i = 0; i < n_givs; i++)
            fprintf(iv, "%s\n[%d,%d,%" PRId64 ",%" PRId64 ",%d,%d]", i ? "," : "", givs[i].thread + 1, givs[i].state,
                    givs[i].start, givs[i].end, givs[i].label, givs[i].stack);
    }

    fprintf(out, "{\"format\":\"rperf-gvl-report\",\"version\":1,\"minor\":%d,\n", causes ? 1 : 0);
    fprintf(out,
            "\"meta\":{\"tool\":\"rperf-gvl\",\"tool_version\":\"0.1.0\",\"ruby_version\":\"3.3.8\",\"pid\":%lld,"
            "\"program\":\"bench/app.rb\",\"mode\":\"wall\",\"frequency\":1000,\"start_time_ns\":%lld,"
            "\"start_monotonic_ns\":%lld,\"duration_ns\":%" PRId64 ",\"sequence\":%lld},\n",
            pid, 1700000000000000000LL + start_ns, start_ns, duration, sequence);
    fprintf(out,
            "\"stats\":{\"trigger_count\":%" PRId64 ",\"sampling_count\":%" PRId64 ",\"sampling_time_ns\":%" PRId64
            ",\"hook_events\":%lld,\"hook_time_ns\":%lld,\"dropped_samples\":%d,\"dropped_aggregation\":0,"
            "\"dropped_intervals\":%d,\"dropped_edges\":0,\"dropped_threads\":0,\"dropped_label_sets\":0},\n",
            duration / 1000000, duration / 1000000 * nthreads, duration / 1000, n_intervals * 2, n_intervals * 100,
            drops ? 17 : 0, drops ? 1234 : 0);
    fprintf(out, "\"ractors\":[");
    for (int r = 1; r <= nractors; r++)
        fprintf(out, "%s{\"id\":%d,\"main\":%s}", r > 1 ? "," : "", r, r == 1 ? "true" : "false");
    fprintf(out, "],\n\"threads\":[\n");
    for (int t = 0; t < nthreads; t++) {
        gthread_t *g = &th[t];
        char name[32];
        if (t == 0)
            snprintf(name, sizeof(name), "main");
        else if (t % 5 == 4)
            name[0] = '\0';
        else
            snprintf(name, sizeof(name), "worker-%d", t);
        fprintf(out,
                "%s{\"seq\":%d,\"name\":\"%s\",\"native_id\":%d,\"ractor\":%d,\"first_seen_ns\":%" PRId64
                ",\"last_seen_ns\":%" PRId64 ",\"exited\":%s,\"running_ns\":%" PRId64 ",\"gvl_wait_ns\":%" PRId64
                ",\"blocked_ns\":%" PRId64 ",\"gc_mark_ns\":%" PRId64 ",\"gc_sweep_ns\":%" PRId64
                ",\"acquisitions\":%" PRId64 ",\"waits\":%" PRId64,
                t ? ",\n" : "", t + 1, name, 10000 + t, g->ractor, g->first_seen, g->last_seen,
                g->end_slice < slices ? "true" : "false", g->state_ns[0], g->state_ns[1], g->state_ns[2],
                g->state_ns[3], g->state_ns[4], g->acquisitions, g->waits);
        if (causes)
            write_causes(out, g->cause_ns, true);
        fputc('}', out);
    }
    static const char *const endpoints[] = {"GET /users/:id", "POST /orders", "GET /search",
                                            "job:mailer",     "job:report",   "GET /health"};
    fprintf(out, "],\n\"label_sets\":[{\"id\":0,\"labels\":{}}");
    for (int l = 1; l < nlabels; l++) {
        if (l % 3 == 2)
            fprintf(out, ",{\"id\":%d,\"labels\":{\"endpoint\":\"%s\",\"tenant\":\"t%d\"}}", l, endpoints[l % 6], l);
        else
            fprintf(out, ",{\"id\":%d,\"labels\":{\"endpoint\":\"%s\"}}", l, endpoints[l % 6]);
    }
    fprintf(out, "],\n\"label_totals\":[");
    bool first = true;
    for (int t = 0; t < nthreads; t++)
        for (int l = 0; l < nlabels; l++) {
            int64_t *x = &ltot[((size_t)t * (size_t)nlabels + (size_t)l) * 5];
            if (!(x[0] | x[1] | x[2] | x[3] | x[4]))
                continue;
            fprintf(out,
                    "%s\n{\"thread\":%d,\"label_set\":%d,\"running_ns\":%" PRId64 ",\"gvl_wait_ns\":%" PRId64
                    ",\"blocked_ns\":%" PRId64 ",\"gc_mark_ns\":%" PRId64 ",\"gc_sweep_ns\":%" PRId64,
                    first ? "" : ",", t + 1, l, x[0], x[1], x[2], x[3], x[4]);
            if (causes)
                write_causes(out, &ltc[((size_t)t * (size_t)nlabels + (size_t)l) * N_CAUSES], false);
            fputc('}', out);
            first = false;
        }
    fprintf(out, "],\n\"frames\":[[\"<GVL>\",\"[GVL blocked]\"],[\"<GVL>\",\"[GVL wait]\"],"
                 "[\"<GC>\",\"[GC marking]\"],[\"<GC>\",\"[GC sweeping]\"]");
    static const char *const files[] = {"app/models/user.rb", "app/controllers/orders_controller.rb",
                                        "lib/search/index.rb", "app/jobs/mailer_job.rb", "lib/util/json.rb"};
    for (int f = 0; f < N_APP_FRAMES; f++)
        fprintf(out, ",[\"%s:%d\",\"%s#m%d\"]", files[f % 5], 10 + f * 3, f % 2 ? "Worker" : "Handler", f);
    fprintf(out, "],\n\"stacks\":[");
    for (int a = 0; a < APP_STACKS; a++) {
        int depth = 2 + a % 5;
        for (int k = 0; k < STACK_KINDS; k++) {
            fprintf(out, "%s[", a || k ? "," : "");
            static const int leaf[STACK_KINDS] = {-1, 1, 0, 2, 3};
            if (leaf[k] >= 0)
                fprintf(out, "%d,", leaf[k]);
            for (int j = 0; j < depth; j++)
                fprintf(out, "%s%d", j ? "," : "", 4 + (a * 7 + j * 3) % N_APP_FRAMES);
            fprintf(out, "]");
        }
    }
    fprintf(out, "],\n\"samples\":[");
    first = true;
    for (int t = 0; t < nthreads; t++)
        for (size_t s = 0; s < nstacks; s++)
            for (int l = 0; l < nlabels; l++) {
                int64_t w = samples[((size_t)t * nstacks + s) * (size_t)nlabels + (size_t)l];
                if (!w)
                    continue;
                fprintf(out, "%s[%zu,%" PRId64 ",%d,%d]", first ? "" : ",", s, w, t + 1, l);
                first = false;
            }
    fprintf(out, "],\n\"intervals\":[");
    rewind(iv);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), iv)) > 0)
        fwrite(buf, 1, n, out);
    fclose(iv);
    fprintf(out, "],\n\"edges\":[");
    first = true;
    for (size_t i = 0; i < edge_cap; i++) {
        edge_slot_t *e = &edge_table[i];
        if (!e->used)
            continue;
        const char *kind = e->holder < nthreads ? "thread" : e->holder == nthreads ? "gc" : "handoff";
        fprintf(out,
                "%s\n{\"ractor\":%d,\"waiter\":%d,\"holder_kind\":\"%s\",\"holder\":%d,\"waiter_label_set\":%d,"
                "\"holder_label_set\":%d,\"wait_ns\":%" PRId64 ",\"count\":%" PRId64 "}",
                first ? "" : ",", th[e->waiter].ractor, e->waiter + 1, kind,
                e->holder < nthreads ? e->holder + 1 : 0, e->wls, e->holder < nthreads ? e->hls : 0, e->wait_ns,
                e->count);
        first = false;
    }
    fprintf(out, "],\n\"blame\":[");
    first = true;
    for (int t = 0; t < nthreads; t++)
        for (size_t s = 0; s < nstacks; s++)
            for (int l = 0; l < nlabels; l++) {
                int64_t w = blame[((size_t)t * nstacks + s) * (size_t)nlabels + (size_t)l];
                if (!w)
                    continue;
                fprintf(out, "%s[%zu,%d,%d,%" PRId64 "]", first ? "" : ",", s, t + 1, l, w);
                first = false;
            }
    fprintf(out, "]");
    if (causes) {
        fprintf(out, ",\n\"causes\":[");
        for (int c = 0; c < N_CAUSES; c++)
            fprintf(out, "%s\"%s\"", c ? "," : "", cause_names[c]);
        fprintf(out, "],\n\"interval_causes\":[");
        first = true;
        for (size_t i = 0; i < n_givs; i++) {
            if (givs[i].state != 2)
                continue;
            fprintf(out, "%s\n[%d,%" PRId64 ",%d,%d]", first ? "" : ",", givs[i].thread + 1, givs[i].start,
                    givs[i].cause, givs[i].releaser);
            first = false;
        }
        fprintf(out, "],\n\"blocked_edges\":[");
        first = true;
        for (size_t i = 0; i < release_cap; i++) {
            edge_slot_t *e = &release_table[i];
            if (!e->used)
                continue;
            fprintf(out,
                    "%s\n{\"ractor\":%d,\"waiter\":%d,\"releaser\":%d,\"cause\":\"%s\",\"waiter_label_set\":%d,"
                    "\"releaser_label_set\":%d,\"blocked_ns\":%" PRId64 ",\"count\":%" PRId64 "}",
                    first ? "" : ",", th[e->waiter].ractor, e->waiter + 1, e->holder / 16 + 1,
                    cause_names[e->holder % 16], e->wls, e->hls, e->wait_ns, e->count);
            first = false;
        }
        fprintf(out, "]");
    }
    fprintf(out, "}\n");
    if (ferror(out) || (path && fclose(out) != 0)) {
        perror("rga_gen_report");
        return 74;
    }
    free(edge_table);
    free(th);
    free(samples);
    free(blame);
    free(ltot);
    free(holder_of);
    free(ran_before);
    free(ran_label);
    free(ltc);
    free(release_table);
    free(givs);
    return 0;
}
