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
 */
#include "interval_codec.h"

#include <string.h>

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

size_t
rperf_interval_decode(rperf_interval_codec_state_t *state, const uint8_t *in, size_t avail, rperf_interval_t *rec)
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
    r.end_ns = (int64_t)((uint64_t)state->end_ns + unzigzag64(end_delta));
    r.start_ns = (int64_t)((uint64_t)r.end_ns - unzigzag64(length));
    *rec = r;
    state->end_ns = r.end_ns;
    state->thread_seq = r.thread_seq;
    state->label_set_id = r.label_set_id;
    state->stack_id = r.stack_id;
    return n;
}
