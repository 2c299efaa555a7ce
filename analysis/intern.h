/* intern.h — strings to dense ids (0, 1, 2, ... in order of first sight).
 *
 * The profile outputs name functions, files and labels by index (pprof's
 * string table, the dedup of frames into functions). An rga_intern_t copies
 * each distinct string once and finds it again in O(1) expected time
 * (a hash index on FNV-1a, common/hash_index.h). It does not sort, remove
 * or free single strings.
 *
 * Ownership: the table owns its copies; rga_intern_str() stays valid until
 * rga_intern_free(). Not thread-safe. No routine prints.
 */
#ifndef RGA_INTERN_H
#define RGA_INTERN_H

#include <stddef.h>

#include "hash_index.h"

typedef struct rga_intern {
    char **strs;   /* by id, NUL-terminated copies */
    size_t *lens;  /* by id */
    size_t n, cap; /* ids used / allocated in strs */
    size_t lens_cap;
    rperf_hash_index_t index;
} rga_intern_t;

void rga_intern_init(rga_intern_t *t);
void rga_intern_free(rga_intern_t *t);

/* The id of s[0..len) (which may contain NUL bytes), adding it when new.
 * Returns the id, or (size_t)-1 when out of memory. */
size_t rga_intern_bytes(rga_intern_t *t, const char *s, size_t len);

/* rga_intern_bytes() of a NUL-terminated string (NULL counts as ""). */
size_t rga_intern(rga_intern_t *t, const char *s);

/* The string with this id (id < t->n). */
const char *rga_intern_str(const rga_intern_t *t, size_t id);

#endif
