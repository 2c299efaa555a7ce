/* cli.h — what the two parts of the rperf-gvl command line share: main.c
 * (the views of reports) and record.c (the `record` subcommand).
 *
 * Contract: the exit codes of docs/cli.md; say() is the one way to print a
 * message (one "rperf-gvl: ..." line on stderr, after what stdout holds);
 * fail_usage() and fail_option() print a usage error and return
 * EXIT_USAGE; exit_for() maps a library status to an exit code. Nothing here
 * reads a report or runs a program. CLI-only: not compiled into the Ruby
 * extension, and the library never calls it (the library returns errors,
 * only the CLI prints them).
 */
#ifndef RPERF_CLI_H
#define RPERF_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "rga.h"

/* Exit codes (documented in docs/cli.md and the man page). 64/70/74 follow sysexits.h. */
enum {
    EXIT_OK = 0,
    EXIT_BAD_INPUT = 2, /* a report is missing, unreadable, not JSON or invalid */
    EXIT_USAGE = 64,    /* bad command line */
    EXIT_SOFTWARE = 70, /* rendering failed, out of memory */
    EXIT_IO = 74,       /* an output file could not be written */
    EXIT_NOEXEC = 127   /* record: the program could not be started */
};

/* The name messages start with (never the path the binary was run by). */
extern const char progname[];

/* The --help text. */
void usage(FILE *out);

/* Prints one "rperf-gvl: ..." line on stderr, control bytes escaped. stdout
 * is flushed first, so a log of both reads in the order things happened. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error (fmt has one %s, for arg) and the --help hint: returns EXIT_USAGE. */
int fail_usage(const char *fmt, const char *arg);

/* getopt_long's ':' or '?' for argv[optind - 1]: returns EXIT_USAGE. */
int fail_option(int c, char **argv);

/* Prints a library error as one line; returns 0. */
int report_error(const rga_error_t *err);

/* The exit code of a library status; input: the status came from reading a report. */
int exit_for(rga_status_t st, bool input);

/* --color=WHEN for the stream on fd: auto honours a terminal, NO_COLOR and TERM=dumb. */
bool use_color(const char *when, int fd);

/* Columns of the terminal on stdout, else $COLUMNS, else 100. */
int terminal_width(void);

/* A decimal in [min, max], whole text; false otherwise. */
bool parse_long(const char *text, long min, long max, long *out);

bool ends_with(const char *s, const char *suffix);

#endif
