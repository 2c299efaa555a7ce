/*
 * utf8_text.c — report text to valid UTF-8 (rule in utf8_text.h).
 *
 * The common case, a String already valid in UTF-8 or ASCII, costs one
 * coderange check (cached by Ruby on the String) and a copy. It does NOT
 * keep the original bytes anywhere: the report carries the scrubbed text.
 */
#include "utf8_text.h"

#include <ruby/encoding.h>

#define REPLACEMENT_CHARACTER "\xEF\xBF\xBD" /* U+FFFD in UTF-8 */

VALUE
rperf_utf8_text(VALUE str)
{
    rb_encoding *utf8 = rb_utf8_encoding();
    rb_encoding *enc = rb_enc_get(str);
    VALUE out;
    if (enc == utf8 || enc == rb_usascii_encoding()) {
        if (rb_enc_str_coderange(str) != ENC_CODERANGE_BROKEN) {
            out = rb_str_dup(str);
            rb_enc_associate(out, utf8);
            return out;
        }
        out = rb_str_dup(str);
    } else if (enc != rb_ascii8bit_encoding() && rb_econv_has_convpath_p(rb_enc_name(enc), rb_enc_name(utf8))) {
        /* Invalid input and characters UTF-8 lacks become U+FFFD here. */
        out = rb_str_encode(str, rb_enc_from_encoding(utf8), ECONV_INVALID_REPLACE | ECONV_UNDEF_REPLACE, Qnil);
        if (out == str)
            out = rb_str_dup(str);
    } else {
        /* Binary (or an encoding without a converter): the bytes as UTF-8. */
        out = rb_str_dup(str);
    }
    rb_enc_associate(out, utf8);
    VALUE scrubbed = rb_str_scrub(out, rb_utf8_str_new_cstr(REPLACEMENT_CHARACTER));
    if (NIL_P(scrubbed))
        return out;
    rb_enc_associate(scrubbed, utf8);
    return scrubbed;
}
