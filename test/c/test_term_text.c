/* test_term_text.c — terminal text: every byte a terminal acts on is
 * escaped (C0, DEL, C1 as UTF-8, invalid UTF-8), printable text passes
 * unchanged, cuts fall on character boundaries, and widths are display
 * columns (accented 1, CJK 2, combining 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "term_text.h"

static void
test_escape(void **state)
{
    (void)state;
    char out[256];
    assert_string_equal(rga_term_escape("plain /users/:id Zoë 日本", out, sizeof(out)), "plain /users/:id Zoë 日本");
    assert_string_equal(rga_term_escape("\033]0;t\a\033[2J\r\n\t\x7f", out, sizeof(out)),
                        "\\x1b]0;t\\x07\\x1b[2J\\x0d\\x0a\\x09\\x7f");
    /* U+009B (CSI as a C1 control) and bytes that are not UTF-8. */
    assert_string_equal(rga_term_escape("a\xc2\x9b"
                                        "b\x9b"
                                        "c\xff\xc3",
                                        out, sizeof(out)),
                        "a\\xc2\\x9bb\\x9bc\\xff\\xc3");
    /* Overlong encodings and surrogates are not UTF-8 either. */
    assert_string_equal(rga_term_escape("\xc0\xaf\xed\xa0\x80", out, sizeof(out)), "\\xc0\\xaf\\xed\\xa0\\x80");
    /* Cut at a boundary: never half a character or half an escape. */
    char small[6];
    assert_string_equal(rga_term_escape("ab\033cd", small, sizeof(small)), "ab");
    assert_string_equal(rga_term_escape("a日本", small, sizeof(small)), "a日");
}

static void
test_width(void **state)
{
    (void)state;
    assert_int_equal(rga_text_width("abc"), 3);
    assert_int_equal(rga_text_width("Zoë"), 3);
    assert_int_equal(rga_text_width("e\xcc\x81"), 1); /* e + combining acute */
    assert_int_equal(rga_text_width("日本語"), 6);
    assert_int_equal(rga_text_width("ｱＡ"), 3); /* halfwidth katakana 1, fullwidth A 2 */
    assert_int_equal(rga_text_width("µs"), 2);
    assert_int_equal(rga_text_width("\xff"), 1);
    assert_int_equal(rga_text_prefix("日本語", 5), 6); /* two characters, 4 columns */
    assert_int_equal(rga_text_prefix("Zoë!", 3), 4);
    assert_int_equal(rga_text_prefix("abc", 10), 3);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
