/*
 * interval_sink.h — where a timeline's JSON text goes, a chunk at a time:
 * a String, a File's descriptor (written without the GVL), or any other IO
 * with #write; and the temporary file that holds the causes' text of a
 * one-pass write until its place in the document.
 *
 * It does NOT format JSON (interval_json.h) nor read records
 * (interval_list.c).
 *
 * Contract
 * - Everything here runs with the GVL and may raise: SystemCallError when
 *   a descriptor refuses the bytes (disk full), or what the IO's #write
 *   raises.
 * - A sink holds Ruby objects (io.buffer, string) that the caller keeps
 *   alive while it writes (RB_GC_GUARD on the sink's fields).
 * - rperf_interval_spill_open returns a descriptor the caller closes, or
 *   -1 when no temporary file can be made.
 */
#ifndef RPERF_INTERVAL_SINK_H
#define RPERF_INTERVAL_SINK_H

#include <ruby.h>
#include <stddef.h>
#include "interval_json.h"

/* To an IO other than a File (a GzipWriter, a StringIO): one String
 * reused for every chunk, since their #write is done with it when it
 * returns, and a new String a chunk would leave the whole text behind as
 * garbage until the next GC. */
typedef struct rperf_interval_io_target {
    VALUE io;
    VALUE buffer;
} rperf_interval_io_target_t;

/* Where JSON text goes: a String (to_json), a File's descriptor or any
 * other IO (see rperf_interval_write_to_fd and write_to_io). */
typedef struct rperf_interval_sink {
    rperf_interval_json_emit_fn *emit;
    void *arg;
    int fd; /* -1 unless a descriptor */
    rperf_interval_io_target_t io;
    VALUE string;
} rperf_interval_sink_t;

/* A String of `capacity` bytes to start with (s->string). */
void rperf_interval_sink_to_string(rperf_interval_sink_t *s, size_t capacity);
/* A File gets the bytes at its descriptor (binary, no encoding
 * conversion); anything else with #write must be done with its argument
 * when #write returns (IO-likes, GzipWriter, StringIO are). */
void rperf_interval_sink_to_io(rperf_interval_sink_t *s, VALUE io);
/* An emit function (interval_json.h) writing to the descriptor *(int *)target. */
void rperf_interval_write_to_fd(const char *chunk, size_t length, void *target);
/* Beside the File `io` first (the copy into it then stays in one file
 * system, where the kernel copies without reading the bytes back), else
 * in $TMPDIR or /tmp. */
int rperf_interval_spill_open(VALUE io);
/* Appends the spill's first `length` bytes to `out`: in the kernel when
 * out is a descriptor that copy_file_range takes, else read back a chunk
 * at a time. */
void rperf_interval_spill_copy(int spill, size_t length, rperf_interval_sink_t *out);

#endif
