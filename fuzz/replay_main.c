/* replay_main.c — runs the fuzz harness over files without libFuzzer.
 *
 * Linked with fuzz_report.c into an ordinary executable so that ctest (and
 * the sanitizer build) replays the seed corpus and any saved crash inputs
 * on every run: usage `fuzz_replay FILE...`. It only feeds the files; the
 * harness itself aborts on a disagreement, and ASan/UBSan on memory errors.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        size_t cap = 1 << 16, len = 0, n;
        uint8_t *buf = malloc(cap);
        while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
            len += n;
            if (len == cap) {
                uint8_t *p = realloc(buf, cap *= 2);
                if (!p) {
                    free(buf);
                    buf = NULL;
                }
                buf = p;
            }
        }
        fclose(f);
        if (!buf)
            return 1;
        /* Every prefix too: truncations are the commonest bad input. */
        for (size_t cut = 0; cut <= len; cut += len / 64 + 1)
            LLVMFuzzerTestOneInput(buf, cut);
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
    }
    printf("replayed %d inputs\n", argc - 1);
    return 0;
}
