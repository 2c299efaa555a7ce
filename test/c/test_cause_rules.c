/*
 * test_cause_rules.c — the name rules of ext/rperf/cause_rules.c: each
 * blocking primitive's label maps to its cause; unknown methods are
 * "other", no label is "unknown".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cause_rules.h"

static int
cause_of(const char *label)
{
    return rperf_cause_for_label(label, label ? strlen(label) : 0);
}

static void
test_primitives(void **state)
{
    (void)state;
    assert_int_equal(cause_of("Kernel#sleep"), RPERF_CAUSE_SLEEP);
    assert_int_equal(cause_of("Thread::Mutex#lock"), RPERF_CAUSE_MUTEX);
    assert_int_equal(cause_of("Thread::Mutex#synchronize"), RPERF_CAUSE_MUTEX);
    assert_int_equal(cause_of("Monitor#enter"), RPERF_CAUSE_MUTEX);
    assert_int_equal(cause_of("Thread::Mutex#sleep"), RPERF_CAUSE_CONDVAR);
    assert_int_equal(cause_of("Thread::ConditionVariable#wait"), RPERF_CAUSE_CONDVAR);
    assert_int_equal(cause_of("Thread::Queue#pop"), RPERF_CAUSE_QUEUE);
    assert_int_equal(cause_of("Thread::SizedQueue#push"), RPERF_CAUSE_QUEUE);
    assert_int_equal(cause_of("Thread#join"), RPERF_CAUSE_JOIN);
    assert_int_equal(cause_of("Thread#value"), RPERF_CAUSE_JOIN);
    assert_int_equal(cause_of("Ractor.receive"), RPERF_CAUSE_RACTOR);
    assert_int_equal(cause_of("Ractor#take"), RPERF_CAUSE_RACTOR);
    assert_int_equal(cause_of("Process.wait"), RPERF_CAUSE_PROCESS);
    assert_int_equal(cause_of("Kernel#system"), RPERF_CAUSE_PROCESS);
    assert_int_equal(cause_of("IO#read"), RPERF_CAUSE_IO);
    assert_int_equal(cause_of("IO.select"), RPERF_CAUSE_IO);
    assert_int_equal(cause_of("TCPServer#accept"), RPERF_CAUSE_IO);
    assert_int_equal(cause_of("Kernel#select"), RPERF_CAUSE_IO);
}

static void
test_others(void **state)
{
    (void)state;
    /* An owner's name as a prefix of another owner is not that owner. */
    assert_int_equal(cause_of("IOStream#read"), RPERF_CAUSE_OTHER);
    assert_int_equal(cause_of("Thread::MutexPool#lock"), RPERF_CAUSE_OTHER);
    /* Exact pairs only: a Thread method that does not wait for a thread. */
    assert_int_equal(cause_of("Thread.pass"), RPERF_CAUSE_OTHER);
    assert_int_equal(cause_of("Kernel#sleepy"), RPERF_CAUSE_OTHER);
    assert_int_equal(cause_of("PG::Connection#exec"), RPERF_CAUSE_OTHER);
    assert_int_equal(cause_of("block in foo"), RPERF_CAUSE_OTHER);
    assert_int_equal(cause_of("#sleep"), RPERF_CAUSE_OTHER);
    assert_int_equal(cause_of("Kernel#"), RPERF_CAUSE_OTHER);
    assert_int_equal(cause_of(""), RPERF_CAUSE_UNKNOWN);
    assert_int_equal(cause_of(NULL), RPERF_CAUSE_UNKNOWN);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_primitives),
        cmocka_unit_test(test_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
