/* metrics_cmd.c — `rperf-gvl metrics [OPTION]... DIR` (metrics_cmd.h): the
 * options, one call to the library (rga_metrics_render_dir) and the output
 * written through output.h (a file replaced by rename, as node_exporter's
 * textfile collector wants). All reading and rendering is in the library.
 */
#define _GNU_SOURCE
#include "metrics_cmd.h"
#include "cli.h"
#include "metrics.h"
#include "output.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

static void
metrics_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s metrics [OPTION]... DIR\n"
            "Print the contention metrics of every process that writes DIR as Prometheus text.\n"
            "\n"
            "      --openmetrics   OpenMetrics 1.0 text instead of the text format 0.0.4\n"
            "      --no-fold       leave the files of dead processes in place (read only)\n"
            "      --skip-bad      skip unreadable files (counted in rperf_metrics_files)\n"
            "  -o, --output FILE   write FILE (replaced by rename) instead of standard output\n"
            "      --help          show this help and exit\n"
            "\n"
            "Exit status: 0 ok, 2 bad directory or metrics file, 64 usage error,\n"
            "70 out of memory, 74 output error.\n",
            progname);
}

enum { OPT_OPENMETRICS = 256, OPT_NO_FOLD, OPT_SKIP_BAD, OPT_HELP };

int
metrics_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"openmetrics", no_argument, NULL, OPT_OPENMETRICS},
        {"no-fold", no_argument, NULL, OPT_NO_FOLD},
        {"skip-bad", no_argument, NULL, OPT_SKIP_BAD},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    unsigned flags = RGA_METRICS_FOLD;
    const char *output = NULL;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_OPENMETRICS: flags |= RGA_METRICS_OPENMETRICS; break;
        case OPT_NO_FOLD: flags &= ~RGA_METRICS_FOLD; break;
        case OPT_SKIP_BAD: flags |= RGA_METRICS_SKIP_BAD; break;
        case 'o': output = optarg; break;
        case 'h':
        case OPT_HELP: metrics_usage(stdout); return EXIT_OK;
        default: return fail_option(c, argv);
        }
    }
    if (optind >= argc)
        return fail_usage("%s", "metrics: no directory given");
    if (optind + 1 < argc)
        return fail_usage("metrics: one directory only (%s is extra)", argv[optind + 1]);
    const char *dir = argv[optind];

    rga_error_t err;
    rga_output_t out;
    rga_status_t st = rga_output_open(&out, output, &err);
    if (st != RGA_OK) {
        report_error(&err);
        return exit_for(st, false);
    }
    rga_error_clear(&err);
    errno = 0;
    st = rga_metrics_render_dir(dir, flags, out.fp, &err);
    if (st == RGA_OK) {
        st = rga_output_close(&out, NULL, NULL, &err);
        if (st != RGA_OK)
            report_error(&err);
        return exit_for(st, false);
    }
    int write_errno = errno;
    bool output_failed = ferror(out.fp);
    const char *where = out.path;
    rga_output_discard(&out);
    if (output_failed) {
        say("%s: write failed: %s", where, strerror(write_errno ? write_errno : EIO));
        return EXIT_IO;
    }
    report_error(&err);
    return exit_for(st, true);
}
