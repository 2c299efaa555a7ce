/* test_grow_array.c — the one array growth (common/grow_array.c): the
 * capacity doubles from `first` until the need fits, an array that fits is
 * left alone, and a size that would overflow fails with the array kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "grow_array.h"

static void
test_doubles_from_first(void **state)
{
    (void)state;
    int *items = NULL;
    size_t cap = 0;
    assert_int_equal(rperf_grow_array((void **)&items, &cap, 1, sizeof(int), 64), 0);
    assert_int_equal(cap, 64);
    assert_int_equal(rperf_grow_array((void **)&items, &cap, 64, sizeof(int), 64), 0);
    assert_int_equal(cap, 64);
    assert_int_equal(rperf_grow_array((void **)&items, &cap, 200, sizeof(int), 64), 0);
    assert_int_equal(cap, 256);
    items[199] = 1;
    assert_int_equal(rperf_grow_array((void **)&items, &cap, SIZE_MAX / 2, sizeof(int), 64), -1);
    assert_int_equal(cap, 256);
    free(items);
}

static void
test_first_zero_starts_at_one(void **state)
{
    (void)state;
    char *items = NULL;
    size_t cap = 0;
    assert_int_equal(rperf_grow_array((void **)&items, &cap, 3, 1, 0), 0);
    assert_int_equal(cap, 4);
    free(items);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubles_from_first),
        cmocka_unit_test(test_first_zero_starts_at_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
