/*
 * ruby_opts.h — reading an options Hash with Symbol keys from C: a value,
 * an Integer with a default, a value as a String.
 *
 * Header only, no state. GVL held; NUM2LONG and rb_obj_as_string raise as
 * they do for values of the wrong type.
 */
#ifndef RPERF_RUBY_OPTS_H
#define RPERF_RUBY_OPTS_H

#include <ruby.h>

/* h[:key], nil when absent. */
static inline VALUE
rperf_opt(VALUE h, const char *key)
{
    return rb_hash_aref(h, ID2SYM(rb_intern(key)));
}

/* h[:key] as a long, dflt when absent or nil. */
static inline long
rperf_opt_long(VALUE h, const char *key, long dflt)
{
    VALUE v = rperf_opt(h, key);
    return NIL_P(v) ? dflt : NUM2LONG(v);
}

/* h[:key] as a String (to_s), nil when absent or nil. */
static inline VALUE
rperf_opt_str(VALUE h, const char *key)
{
    VALUE v = rperf_opt(h, key);
    return NIL_P(v) ? Qnil : rb_obj_as_string(v);
}

#endif
