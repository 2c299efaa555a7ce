/*
 * interval_json.h — the JSON text of a report's timeline rows, written
 * from an encoded list (interval_store.h) a chunk at a time: the
 * "intervals" array ([thread_seq, state, start_ns, end_ns, label_set_id,
 * stack_id] per record) or the "interval_causes" array ([thread_seq,
 * start_ns, cause, releaser_seq] per blocked record with a known cause).
 *
 * Formatting the numbers was most of `save` of a large timeline (a
 * million rows are six million integers, two of them ten digits), so the
 * decimal writer here finds a number's length from its bit length and
 * writes two digits per step. It does NOT know Ruby or where the text goes
 * (interval_list.c gives it to a String, an IO or a file descriptor), nor
 * which records a report holds (report_builder.c).
 *
 * Contract
 * - Plain C, no allocation (write's chunk is on the stack), no Ruby; the text is the same bytes as the
 *   rows formatted one at a time with "%lld" and joined with ',' inside
 *   '[' ']' (no spaces).
 * - write: calls emit(chunk, length, arg) with consecutive pieces of the
 *   text of a store's rows (at most RPERF_INTERVAL_JSON_CHUNK bytes each,
 *   at least one call); the chunk is valid only during the call. emit may
 *   leave by longjmp (a Ruby exception): nothing is held that needs
 *   releasing.
 * - begin, put, end: the same text from records given a batch at a time
 *   (in their order: put filters the causes' rows itself), into the
 *   caller's `chunk` of RPERF_INTERVAL_JSON_CHUNK bytes, which stays in
 *   use until end; emit is called the same way, from put and end. One
 *   pass over the records can feed two of these, one per array.
 * - put_pair: put to `rows` (begun for the intervals) and to `causes`
 *   (begun for the causes) at once, the same text as a put to each; the
 *   cheaper way: a cause's row reuses the digits of its interval's row.
 * - int: writes v in decimal at out (at most RPERF_INTERVAL_JSON_INT_MAX
 *   characters, no terminator) and returns how many.
 * - has_cause: whether a record is a row of the causes array.
 */
#ifndef RPERF_INTERVAL_JSON_H
#define RPERF_INTERVAL_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "interval_store.h"
#include "report_format.h"

#define RPERF_INTERVAL_JSON_CHUNK (64 * 1024)
#define RPERF_INTERVAL_JSON_INT_MAX 20

typedef enum rperf_interval_json_rows {
    RPERF_INTERVAL_JSON_INTERVALS,
    RPERF_INTERVAL_JSON_CAUSES,
} rperf_interval_json_rows_t;

typedef void rperf_interval_json_emit_fn(const char *chunk, size_t length, void *arg);

typedef struct rperf_interval_json_out {
    rperf_interval_json_rows_t rows;
    char *chunk;
    size_t used;
    int first;
    rperf_interval_json_emit_fn *emit;
    void *arg;
} rperf_interval_json_out_t;

void rperf_interval_json_begin(rperf_interval_json_out_t *out, rperf_interval_json_rows_t rows, char *chunk,
                               rperf_interval_json_emit_fn *emit, void *arg);
void rperf_interval_json_put(rperf_interval_json_out_t *out, const rperf_interval_t *recs, size_t n);
void rperf_interval_json_put_pair(rperf_interval_json_out_t *rows, rperf_interval_json_out_t *causes,
                                  const rperf_interval_t *recs, size_t n);
void rperf_interval_json_end(rperf_interval_json_out_t *out);

void rperf_interval_json_write(const rperf_interval_store_t *store, rperf_interval_json_rows_t rows,
                               rperf_interval_json_emit_fn *emit, void *arg);
size_t rperf_interval_json_int(char *out, int64_t v);

/* Inline: the builder asks it of every record it clips. */
static inline int
rperf_interval_json_has_cause(const rperf_interval_t *iv)
{
    return iv->state == RPERF_STATE_BLOCKED && iv->cause != RPERF_CAUSE_UNKNOWN;
}

#endif
