/* test_hash_index.c — the hash index every table outside the hooks uses
 * (common/hash_index.c): keys are found again with their ids through any
 * number of growths, also when every key has the same hash (the probe and
 * the `same` callback decide), an absent key is absent, clearing forgets
 * every key and keeps the slots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hash_index.h"
#include "grow_array.h"

#define KEYS 5000 /* the index grows from 64 slots seven times */

typedef struct table {
    int64_t *keys;
    size_t n, cap;
    rperf_hash_index_t index;
    int collide; /* every key hashes alike */
} table_t;

static int
same(const void *table, const void *key, uint32_t id)
{
    return ((const table_t *)table)->keys[id] == *(const int64_t *)key;
}

static uint32_t
hash_of(const table_t *t, int64_t key)
{
    return t->collide ? 7u : rperf_hash_word(RPERF_HASH_SEED, (uint64_t)key);
}

/* The id of `key`, added when absent. */
static long
intern(table_t *t, int64_t key)
{
    uint32_t h = hash_of(t, key);
    size_t slot;
    long id = rperf_hash_index_upsert(&t->index, h, same, t, &key, &slot);
    if (id != -1)
        return id;
    assert_int_equal(rperf_grow_array((void **)&t->keys, &t->cap, t->n + 1, sizeof(*t->keys), 64), 0);
    t->keys[t->n] = key;
    rperf_hash_index_put(&t->index, slot, h, (uint32_t)t->n);
    return (long)t->n++;
}

static void
check_table(int collide, int count)
{
    table_t t;
    memset(&t, 0, sizeof(t));
    t.collide = collide;
    for (int i = 0; i < count; i++)
        assert_int_equal(intern(&t, (int64_t)i * 7919 - 3), i);
    assert_int_equal(t.index.count, count);
    assert_true(t.index.nslots >= (size_t)count * 2);
    for (int i = 0; i < count; i++) {
        int64_t key = (int64_t)i * 7919 - 3;
        assert_int_equal(rperf_hash_index_find(&t.index, hash_of(&t, key), same, &t, &key), i);
        assert_int_equal(intern(&t, key), i);
    }
    int64_t absent = 1;
    assert_int_equal(rperf_hash_index_find(&t.index, hash_of(&t, absent), same, &t, &absent), -1);
    assert_int_equal(t.n, count);

    size_t nslots = t.index.nslots;
    rperf_hash_index_clear(&t.index);
    t.n = 0;
    assert_int_equal(t.index.nslots, nslots);
    int64_t first = -3;
    assert_int_equal(rperf_hash_index_find(&t.index, hash_of(&t, first), same, &t, &first), -1);
    assert_int_equal(intern(&t, 42), 0);
    free(t.keys);
    rperf_hash_index_free(&t.index);
    assert_int_equal(t.index.nslots, 0);
}

static void
test_keys_survive_growth(void **state)
{
    (void)state;
    check_table(0, KEYS);
}

static void
test_colliding_keys_are_told_apart(void **state)
{
    (void)state;
    check_table(1, 300);
}

static void
test_empty_index_finds_nothing(void **state)
{
    (void)state;
    table_t t;
    memset(&t, 0, sizeof(t));
    int64_t key = 5;
    assert_int_equal(rperf_hash_index_find(&t.index, 1, same, &t, &key), -1);
    rperf_hash_index_free(&t.index);
}

static void
test_bytes_hash_is_fnv1a(void **state)
{
    (void)state;
    /* FNV-1a 32 of "a" is a known constant. */
    assert_int_equal(rperf_hash_bytes("a", 1), 0xe40c292cu);
    assert_int_equal(rperf_hash_bytes("", 0), RPERF_HASH_SEED);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_survive_growth),
        cmocka_unit_test(test_colliding_keys_are_told_apart),
        cmocka_unit_test(test_empty_index_finds_nothing),
        cmocka_unit_test(test_bytes_hash_is_fnv1a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
