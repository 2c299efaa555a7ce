/*
 * yardstick_hook.c — the floor for bench_sampler.rb: a GVL event hook that
 * does what a counters-only tool does (read the monotonic clock, add to a
 * per-event-type counter) and nothing else.
 *
 * It is a measuring stick, not part of the profiler: the bench runs it side
 * by side with the real hooks so that their overhead can be read against
 * what merely having a hook with a clock read costs on the same machine at
 * the same moment. It keeps no per-thread state and never reports.
 *
 * start_ticker(hz) adds a native thread that wakes hz times a second and
 * does nothing else: the floor of any sampler whose timer wakes a thread
 * (a worker, as the profiler's design has), without any sampling work. The
 * thread is named YARDSTICK_TICKER_NAME so a bench can read its CPU time.
 */
#include <ruby.h> /* defines _GNU_SOURCE (pthread_setname_np) */
#include <ruby/thread.h>
#include <pthread.h>
#include <time.h>

#define YARDSTICK_TICKER_NAME "yardstick-tick"

static rb_internal_thread_event_hook_t *hook;
static int64_t last_ns[4];
static uint64_t events[4];

static int
index_of(rb_event_flag_t event)
{
    switch (event) {
    case RUBY_INTERNAL_THREAD_EVENT_READY: return 0;
    case RUBY_INTERNAL_THREAD_EVENT_RESUMED: return 1;
    case RUBY_INTERNAL_THREAD_EVENT_SUSPENDED: return 2;
    default: return 3;
    }
}

static void
on_event(rb_event_flag_t event, const rb_internal_thread_event_data_t *data, void *user)
{
    (void)data;
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int i = index_of(event);
    __atomic_store_n(&last_ns[i], (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec, __ATOMIC_RELAXED);
    __atomic_fetch_add(&events[i], 1, __ATOMIC_RELAXED);
}

static VALUE
yardstick_start(VALUE self)
{
    (void)self;
    if (!hook)
        hook = rb_internal_thread_add_event_hook(on_event,
                                                 RUBY_INTERNAL_THREAD_EVENT_READY |
                                                     RUBY_INTERNAL_THREAD_EVENT_RESUMED |
                                                     RUBY_INTERNAL_THREAD_EVENT_SUSPENDED |
                                                     RUBY_INTERNAL_THREAD_EVENT_EXITED,
                                                 NULL);
    return Qnil;
}

static VALUE
yardstick_events(VALUE self)
{
    (void)self;
    uint64_t total = 0;
    for (int i = 0; i < 4; i++)
        total += __atomic_load_n(&events[i], __ATOMIC_RELAXED);
    return ULL2NUM(total);
}

static long tick_interval_ns;
static uint64_t ticks;

static void *
ticker_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), YARDSTICK_TICKER_NAME);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        next.tv_nsec += tick_interval_ns;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        __atomic_fetch_add(&ticks, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* start_ticker(hz): one detached thread for the life of the process. */
static VALUE
yardstick_start_ticker(VALUE self, VALUE vhz)
{
    (void)self;
    long hz = NUM2LONG(vhz);
    if (hz < 1 || hz > 10000)
        rb_raise(rb_eArgError, "hz must be 1..10000");
    if (tick_interval_ns)
        return Qnil;
    tick_interval_ns = 1000000000L / hz;
    pthread_t th;
    if (pthread_create(&th, NULL, ticker_main, NULL) != 0)
        rb_sys_fail("pthread_create");
    pthread_detach(th);
    return Qnil;
}

static VALUE
yardstick_ticks(VALUE self)
{
    (void)self;
    return ULL2NUM(__atomic_load_n(&ticks, __ATOMIC_RELAXED));
}

RUBY_FUNC_EXPORTED void
Init_yardstick_hook(void)
{
    VALUE mod = rb_define_module("YardstickHook");
    rb_define_module_function(mod, "start", yardstick_start, 0);
    rb_define_module_function(mod, "start_ticker", yardstick_start_ticker, 1);
    rb_define_module_function(mod, "ticks", yardstick_ticks, 0);
    rb_define_module_function(mod, "events", yardstick_events, 0);
}
