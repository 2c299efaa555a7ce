/*
 * interval_codec.c — the delta/varint encoding of intervals (see the header).
 *
 * Layout of one record:
 *   header: bits 0-2 the state (7 = the state byte follows), bit 3 thread
 *           changed, bit 4 label set changed, bit 5 stack changed, bit 6
 *           releaser/cause follow (both zero otherwise);
 *   [state byte] [thread delta] [label delta] [stack delta]
 *   [releaser_seq, cause byte]
 *   end delta from the previous end, then end - start.
 * Deltas are taken in unsigned arithmetic (wrapping, so any values round
 * trip) and zigzagged, so small steps either way take one byte. Records
 * arrive in the order their intervals end, so the end delta is the time
 * between two hand-offs: a few microseconds, two or three bytes.
 *
 * A stop and save of a million records decode each one several times, so
 * decoding has a fast path on little-endian machines: the stop bits of the
 * 16 bytes after a header, gathered into one mask, say where each of the
 * record's varints ends, and each is read as one 64-bit word. A loop over
 * the bytes of each varint waited for the one before and mispredicted
 * about once a record, as the lengths vary. It is taken when 25 bytes can
 * be read (RPERF_INTERVAL_CODEC_FAST_AVAIL) and leaves anything unusual
 * (the state escape, fields longer than the window, a malformed field) to
 * the byte-at-a-time path, which decides.
 */
#include "interval_codec.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* RPERF_INTERVAL_CODEC_BYTEWISE forces the byte-at-a-time decoder, so the
 * tests compile and run that branch on machines that have the word path. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    !defined(RPERF_INTERVAL_CODEC_BYTEWISE)
#define WORD_VARINTS 1
/* The word helpers are a few instructions each: called, they cost more
 * than they save. */
#define INLINE static inline __attribute__((always_inline))
#else
#define WORD_VARINTS 0
#endif

enum {
    STATE_ESCAPE = 7,
    HAS_THREAD = 1 << 3,
    HAS_LABEL = 1 << 4,
    HAS_STACK = 1 << 5,
    HAS_RELEASER = 1 << 6,
    KNOWN_BITS = 0x7f,
};

static uint64_t
zigzag64(uint64_t d)
{
    return (d << 1) ^ (0 - (d >> 63));
}

static uint64_t
unzigzag64(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

static uint32_t
zigzag32(uint32_t d)
{
    return (d << 1) ^ (0 - (d >> 31));
}

static uint32_t
unzigzag32(uint32_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

/* The record's times from its two time varints, and the state after it. */
static inline void
finish_record(rperf_interval_codec_state_t *state, rperf_interval_t *r, uint64_t end_delta, uint64_t length,
              rperf_interval_t *rec)
{
    r->end_ns = (int64_t)((uint64_t)state->end_ns + unzigzag64(end_delta));
    r->start_ns = (int64_t)((uint64_t)r->end_ns - unzigzag64(length));
    *rec = *r;
    state->end_ns = r->end_ns;
    state->thread_seq = r->thread_seq;
    state->label_set_id = r->label_set_id;
    state->stack_id = r->stack_id;
}

static size_t
put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

#if WORD_VARINTS
#ifndef __SSE2__
/* Bit i set: byte i of the 8 at `in` ends a varint (its top bit is
 * clear). The multiply gathers the eight top bits into the top byte. */
INLINE unsigned
stop_bits(const uint8_t *in)
{
    uint64_t x;
    memcpy(&x, in, sizeof(x));
    return (unsigned)((((~x & 0x8080808080808080ull) >> 7) * 0x0102040810204080ull) >> 56);
}
#endif

/* The value of the `len`-byte varint (1..8) at in. */
INLINE uint64_t
varint_value64(const uint8_t *in, unsigned len)
{
    uint64_t x;
    memcpy(&x, in, sizeof(x));
    x &= (~0ull >> (64 - 8 * len)) & 0x7f7f7f7f7f7f7f7full;
    x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
    x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
    return (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
}

/* The same for len 1..4 (at most 28 bits): two steps instead of three. */
INLINE uint32_t
varint_value32(const uint8_t *in, unsigned len)
{
    uint32_t x;
    memcpy(&x, in, sizeof(x));
    x &= (0xffffffffu >> (32 - 8 * len)) & 0x7f7f7f7fu;
    x = (x & 0x007f007fu) | ((x & 0x7f007f00u) >> 1);
    return (x & 0x00003fffu) | ((x & 0x3fff0000u) >> 2);
}

/* Where the next varint ends (its last byte's index), given the stop bits
 * not yet used; -1 when none is left in the window. */
INLINE int
next_end(unsigned stops)
{
    return stops ? __builtin_ctz(stops) : -1;
}

/* The next varint of the record (at most max_len bytes, ending within the
 * window) from fields + *pos: 1 and *value, or 0 for the slow path. */
INLINE int
next_varint(const uint8_t *fields, unsigned *stops, unsigned *pos, unsigned max_len, uint64_t *value)
{
    int end = next_end(*stops);
    unsigned len = (unsigned)end + 1 - *pos;
    if (end < 0 || len > max_len)
        return 0;
    /* Most fields take up to 4 bytes: the shorter compaction. */
    *value = len <= 4 ? varint_value32(fields + *pos, len) : varint_value64(fields + *pos, len);
    *pos = (unsigned)end + 1;
    *stops &= *stops - 1;
    return 1;
}

/* A 32-bit delta field onto *field; those of 5 bytes go the slow way. */
INLINE int
next_delta32(const uint8_t *fields, unsigned *stops, unsigned *pos, int32_t *field)
{
    uint64_t z;
    if (!next_varint(fields, stops, pos, 4, &z))
        return 0;
    *field = (int32_t)((uint32_t)*field + unzigzag32((uint32_t)z));
    return 1;
}
#endif

/* Reads a varint of at most max_bytes bytes; 0 when truncated or too long. */
static size_t
get_varint(const uint8_t *in, size_t avail, size_t max_bytes, uint64_t *v)
{
    uint64_t out = 0;
    for (size_t i = 0; i < avail && i < max_bytes; i++) {
        out |= (uint64_t)(in[i] & 0x7f) << (7 * i);
        if (!(in[i] & 0x80)) {
            *v = out;
            return i + 1;
        }
    }
    return 0;
}

void
rperf_interval_codec_reset(rperf_interval_codec_state_t *state)
{
    memset(state, 0, sizeof(*state));
}

static uint32_t
delta32(int32_t now, int32_t before)
{
    return zigzag32((uint32_t)now - (uint32_t)before);
}

size_t
rperf_interval_encode(rperf_interval_codec_state_t *state, const rperf_interval_t *rec, uint8_t *out)
{
    size_t n = 1;
    uint8_t header = rec->state < STATE_ESCAPE ? rec->state : STATE_ESCAPE;
    if (header == STATE_ESCAPE)
        out[n++] = rec->state;
    if (rec->thread_seq != state->thread_seq) {
        header |= HAS_THREAD;
        n += put_varint(out + n, delta32(rec->thread_seq, state->thread_seq));
    }
    if (rec->label_set_id != state->label_set_id) {
        header |= HAS_LABEL;
        n += put_varint(out + n, delta32(rec->label_set_id, state->label_set_id));
    }
    if (rec->stack_id != state->stack_id) {
        header |= HAS_STACK;
        n += put_varint(out + n, delta32(rec->stack_id, state->stack_id));
    }
    if (rec->releaser_seq || rec->cause) {
        header |= HAS_RELEASER;
        n += put_varint(out + n, (uint32_t)rec->releaser_seq);
        out[n++] = rec->cause;
    }
    n += put_varint(out + n, zigzag64((uint64_t)rec->end_ns - (uint64_t)state->end_ns));
    n += put_varint(out + n, zigzag64((uint64_t)rec->end_ns - (uint64_t)rec->start_ns));
    out[0] = header;
    state->end_ns = rec->end_ns;
    state->thread_seq = rec->thread_seq;
    state->label_set_id = rec->label_set_id;
    state->stack_id = rec->stack_id;
    return n;
}

/* A zigzagged 32-bit delta applied to base; 0 on bad input. */
static size_t
get_delta32(const uint8_t *in, size_t avail, int32_t base, int32_t *out)
{
    uint64_t z;
    size_t used = get_varint(in, avail, 5, &z);
    if (!used || z > UINT32_MAX)
        return 0;
    *out = (int32_t)((uint32_t)base + unzigzag32((uint32_t)z));
    return used;
}

#if WORD_VARINTS
/* The common record, with RPERF_INTERVAL_CODEC_FAST_AVAIL bytes readable:
 * the stop bits of the 16 bytes after the header give where every varint
 * ends at once, so no field waits for the one before it to be read. 0
 * (nothing changed) for anything the byte-at-a-time path must decide. */
INLINE size_t
decode_fast(rperf_interval_codec_state_t *state, const uint8_t *in, rperf_interval_t *rec)
{
    uint8_t header = in[0];
    if ((header & ~KNOWN_BITS) || (header & STATE_ESCAPE) == STATE_ESCAPE)
        return 0;
    const uint8_t *fields = in + 1;
#ifdef __SSE2__
    /* One instruction gathers the 16 top bits (SSE2 is in every x86-64). */
    unsigned stops = (unsigned)~_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)fields)) & 0xffffu;
#else
    unsigned stops = stop_bits(fields) | stop_bits(fields + 8) << 8;
#endif
    unsigned pos = 0;
    rperf_interval_t r;
    r.state = header & STATE_ESCAPE;
    r.thread_seq = state->thread_seq;
    r.label_set_id = state->label_set_id;
    r.stack_id = state->stack_id;
    r.releaser_seq = 0;
    r.cause = 0;
    if ((header & HAS_THREAD) && !next_delta32(fields, &stops, &pos, &r.thread_seq))
        return 0;
    if ((header & HAS_LABEL) && !next_delta32(fields, &stops, &pos, &r.label_set_id))
        return 0;
    if ((header & HAS_STACK) && !next_delta32(fields, &stops, &pos, &r.stack_id))
        return 0;
    if (header & HAS_RELEASER) {
        /* Stored as is, not as a delta: a zero base, no zigzag. */
        uint64_t releaser;
        if (!next_varint(fields, &stops, &pos, 4, &releaser) || pos >= 16)
            return 0;
        r.releaser_seq = (int32_t)(uint32_t)releaser;
        /* The cause is a plain byte, whatever its top bit says. */
        r.cause = fields[pos];
        stops &= ~((2u << pos) - 1); /* its own stop bit and the releaser's */
        pos++;
    }
    uint64_t end_delta, length;
    if (!next_varint(fields, &stops, &pos, 8, &end_delta) || !next_varint(fields, &stops, &pos, 8, &length))
        return 0;
    finish_record(state, &r, end_delta, length, rec);
    return 1 + pos;
}
#endif

/* One record a byte at a time: the reference decoder, which decides
 * every record decode_fast declines. */
static size_t
decode_bytes(rperf_interval_codec_state_t *state, const uint8_t *in, size_t avail, rperf_interval_t *rec)
{
    if (avail < 1 || (in[0] & ~KNOWN_BITS))
        return 0;
    uint8_t header = in[0];
    size_t n = 1, used;
    rperf_interval_t r;
    memset(&r, 0, sizeof(r));
    r.state = header & STATE_ESCAPE;
    if (r.state == STATE_ESCAPE) {
        if (n >= avail)
            return 0;
        r.state = in[n++];
    }
    r.thread_seq = state->thread_seq;
    r.label_set_id = state->label_set_id;
    r.stack_id = state->stack_id;
    if ((header & HAS_THREAD) && !(used = get_delta32(in + n, avail - n, state->thread_seq, &r.thread_seq)))
        return 0;
    n += (header & HAS_THREAD) ? used : 0;
    if ((header & HAS_LABEL) && !(used = get_delta32(in + n, avail - n, state->label_set_id, &r.label_set_id)))
        return 0;
    n += (header & HAS_LABEL) ? used : 0;
    if ((header & HAS_STACK) && !(used = get_delta32(in + n, avail - n, state->stack_id, &r.stack_id)))
        return 0;
    n += (header & HAS_STACK) ? used : 0;
    if (header & HAS_RELEASER) {
        uint64_t releaser;
        if (!(used = get_varint(in + n, avail - n, 5, &releaser)) || releaser > UINT32_MAX)
            return 0;
        n += used;
        if (n >= avail)
            return 0;
        r.releaser_seq = (int32_t)(uint32_t)releaser;
        r.cause = in[n++];
    }
    uint64_t end_delta, length;
    if (!(used = get_varint(in + n, avail - n, 10, &end_delta)))
        return 0;
    n += used;
    if (!(used = get_varint(in + n, avail - n, 10, &length)))
        return 0;
    n += used;
    finish_record(state, &r, end_delta, length, rec);
    return n;
}

size_t
rperf_interval_decode(rperf_interval_codec_state_t *state, const uint8_t *in, size_t avail, rperf_interval_t *rec)
{
#if WORD_VARINTS
    if (avail >= RPERF_INTERVAL_CODEC_FAST_AVAIL) {
        size_t used = decode_fast(state, in, rec);
        if (used)
            return used;
    }
#endif
    return decode_bytes(state, in, avail, rec);
}

size_t
rperf_interval_decode_many(rperf_interval_codec_state_t *state, const uint8_t *in, size_t avail,
                           rperf_interval_t *out, uint8_t *lengths, size_t max, size_t *used)
{
    /* The state in a local: the compiler keeps it in registers across
     * records instead of storing and reloading it for each. */
    rperf_interval_codec_state_t st = *state;
    size_t pos = 0, n = 0;
    while (n < max) {
        size_t len = 0;
#if WORD_VARINTS
        if (avail - pos >= RPERF_INTERVAL_CODEC_FAST_AVAIL)
            len = decode_fast(&st, in + pos, &out[n]);
#endif
        if (!len && !(len = decode_bytes(&st, in + pos, avail - pos, &out[n])))
            break;
        if (lengths)
            lengths[n] = (uint8_t)len;
        pos += len;
        n++;
    }
    *state = st;
    *used = pos;
    return n;
}
