/* record.c — the `rperf-gvl record` subcommand (see record.h), in the
 * order of a run: the arguments; the output and the temporary file the
 * program writes its report to; the program's environment (autorecord, the
 * status channel); starting it in its own process group; signals and the
 * terminal (passed on, handed over, job control); the wait, answering
 * autorecord; the report put in place, its summary and page; the exit code.
 *
 * It does not profile (autorecord and the extension do) and does not write
 * the report (the program does); it reads it back through the library.
 * CLI-only: not compiled into the Ruby extension.
 */
#define _GNU_SOURCE
#include "record.h"
#include "cli.h"
#include "output.h"
#include "rga.h"
#include "rperf_limits.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RPERF_GVL_SOURCE_LIBDIR
#define RPERF_GVL_SOURCE_LIBDIR ""
#endif
#ifndef RPERF_GVL_SOURCE_EXTDIR
#define RPERF_GVL_SOURCE_EXTDIR ""
#endif

static bool
file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The directory holding rperf/autorecord.rb: $RPERF_GVL_LIBDIR, ../lib next to
 * this executable, or the source tree's lib/ this binary was built from. In
 * the last case *from_build is set: the extension then comes from the build
 * tree too (an installed gem finds its own). */
static bool
find_libdir(char *buf, size_t size, bool *from_build)
{
    char probe[PATH_MAX + 32];
    *from_build = false;
    const char *env = getenv("RPERF_GVL_LIBDIR");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return true;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            int n1 = snprintf(probe, sizeof(probe), "%s/../lib/rperf/autorecord.rb", exe);
            if (n1 > 0 && (size_t)n1 < sizeof(probe) && file_exists(probe)) {
                int n2 = snprintf(buf, size, "%s/../lib", exe);
                return n2 > 0 && (size_t)n2 < size;
            }
        }
    }
    if (RPERF_GVL_SOURCE_LIBDIR[0]) {
        snprintf(buf, size, "%s", RPERF_GVL_SOURCE_LIBDIR);
        *from_build = true;
        return true;
    }
    return false;
}

/* Prepends dirs (':'-separated) to the search path variable name. */
static bool
prepend_path(const char *name, const char *dirs)
{
    const char *old = getenv(name);
    size_t len = strlen(dirs) + (old ? strlen(old) : 0) + 2;
    char *value = malloc(len);
    if (!value)
        return false;
    snprintf(value, len, "%s%s%s", dirs, old && *old ? ":" : "", old && *old ? old : "");
    int rc = setenv(name, value, 1);
    free(value);
    return rc == 0;
}

/* Where record's report goes. The program writes a temporary file that this
 * run created (in the output's directory, so the rename is atomic); it
 * replaces the output once the program says the report is whole. A device
 * or FIFO output is never replaced: the report is copied into it, once. */
typedef struct record_target {
    char path[PATH_MAX];     /* absolute output path */
    char tmp[PATH_MAX + 64]; /* what the program writes */
    bool in_place;           /* output is a device/FIFO: copy into it */
} record_target_t;

static int
record_target_fail(const char *output, const char *what, int errnum)
{
    say("%s: cannot write the report: %s%s%s", output, what, errnum ? ": " : "", errnum ? strerror(errnum) : "");
    return EXIT_IO;
}

#define TMP_NAME_ROOM (NAME_MAX - sizeof(".rperf-gvl-XXXXXX-") + 1) /* bytes left for NAME */

/* Checks that the output can be written before the program starts, and
 * creates the temporary (same ending as the output, so .gz stays gzip). */
static int
record_target_open(record_target_t *t, const char *output)
{
    memset(t, 0, sizeof(*t));
    int n;
    if (output[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)))
            return record_target_fail(output, "cannot read the current directory", errno);
        n = snprintf(t->path, sizeof(t->path), "%s/%s", cwd, output);
    } else {
        n = snprintf(t->path, sizeof(t->path), "%s", output);
    }
    if (n < 0 || (size_t)n >= sizeof(t->path))
        return record_target_fail(output, "path too long", 0);
    struct stat sb;
    bool exists = stat(t->path, &sb) == 0;
    if (!exists && errno != ENOENT)
        return record_target_fail(output, "cannot inspect it", errno);
    if (exists && S_ISDIR(sb.st_mode))
        return record_target_fail(output, "is a directory", 0);
    if (exists && access(t->path, W_OK) != 0)
        return record_target_fail(output, "not writable", errno);
    t->in_place = exists && !S_ISREG(sb.st_mode);
    const char *ending = ends_with(output, ".gz") ? ".json.gz" : ".json";
    size_t suffix_len = strlen(ending);
    if (t->in_place) {
        const char *tmpdir = getenv("TMPDIR");
        n = snprintf(t->tmp, sizeof(t->tmp), "%s/rperf-gvl-XXXXXX%s", tmpdir && *tmpdir ? tmpdir : "/tmp", ending);
    } else {
        char real[PATH_MAX];
        const char *final = exists && realpath(t->path, real) ? real : t->path;
        if (final == real)
            snprintf(t->path, sizeof(t->path), "%s", real); /* a link: replace its target */
        /* ".rperf-gvl-XXXXXX-NAME", NAME cut to fit NAME_MAX (keeping ".gz": autorecord gzips by the name). */
        const char *slash = strrchr(final, '/'), *name = slash + 1;
        const char *gz = strlen(name) > TMP_NAME_ROOM && ends_with(name, ".gz") ? ".gz" : "";
        int head = (int)rga_name_head(name, TMP_NAME_ROOM - strlen(gz));
        n = snprintf(t->tmp, sizeof(t->tmp), "%.*s/.rperf-gvl-XXXXXX-%.*s%s", (int)(slash - final), final, head,
                     name, gz);
        suffix_len = 1 + (size_t)head + strlen(gz);
    }
    if (n < 0 || (size_t)n >= sizeof(t->tmp))
        return record_target_fail(output, "path too long", 0);
    int fd = mkstemps(t->tmp, (int)suffix_len);
    if (fd < 0) {
        int saved = errno;
        t->tmp[0] = '\0';
        return record_target_fail(output,
                                  t->in_place ? "cannot create a temporary file"
                                              : "cannot create a file in its directory",
                                  saved);
    }
    /* mkstemps makes 0600; the report gets the mode a plain create (or the replaced file) would have. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, exists && !t->in_place ? (sb.st_mode & 07777) : (0666 & ~mask));
    close(fd);
    return EXIT_OK;
}

/* Puts the finished report at the output: rename, or copy into a device. */
static int
record_target_commit(record_target_t *t, const char *output)
{
    if (!t->in_place) {
        if (rename(t->tmp, t->path) != 0)
            return record_target_fail(output, "cannot move the report into place", errno);
        return EXIT_OK; /* the name stays known: a second Ruby process may write it again */
    }
    FILE *in = fopen(t->tmp, "rb"), *out = in ? fopen(t->path, "wb") : NULL;
    int saved = errno;
    bool failed = !in || !out;
    char buf[65536];
    size_t n;
    while (!failed && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        failed = fwrite(buf, 1, n, out) != n;
    if (!failed)
        failed = ferror(in) != 0;
    if (failed)
        saved = errno;
    if (out && fclose(out) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    if (in)
        fclose(in);
    unlink(t->tmp); /* taken: copied once */
    return failed ? record_target_fail(output, "write failed", saved) : EXIT_OK;
}

static void
record_target_close(record_target_t *t)
{
    if (t->tmp[0])
        unlink(t->tmp);
    t->tmp[0] = '\0';
}

/* ---- the status channel -------------------------------------------------------------- */

/* A SOCK_SEQPACKET socketpair, so autorecord can tell record what became of
 * the report without needing the disk. record keeps one end; the program
 * inherits the other through RPERF_GVL_STATUS_FD ("FD:INODE": autorecord
 * uses the fd only when it is that socket). Messages, one a packet:
 * "started PID" when autorecord loads, "forked PID" when a forked child's
 * profile restarts; at exit "written PID" (record puts the report in place
 * and answers "ok"; no answer means record is gone), "failed PID REASON" or
 * "none PID"; a forked child "child PID PATH" (record moves PATH beside the
 * output, with the pid in its name, and answers "ok"). A forked child gone
 * without a word (killed) is named as lost. */
#define MAX_PENDING 64

typedef struct record_child {
    pid_t pid;
    char path[PATH_MAX + 32]; /* where its report is now */
    bool moved;               /* beside the output (else left where the child wrote it) */
} record_child_t;

typedef struct record_channel {
    int fd;                           /* record's end; -1 once closed */
    int child_fd;                     /* the program's end, open in record until the fork */
    bool started;                     /* a Ruby process loaded autorecord */
    bool failed;                      /* the last report could not be written */
    char reason[256];                 /* why */
    pid_t pending[MAX_PENDING];       /* Ruby processes started and not yet done */
    bool pending_forked[MAX_PENDING]; /* beside pending: a forked child, not the program */
    size_t n_pending;
    pid_t lost[MAX_PENDING]; /* forked children gone without a report, in the order seen */
    size_t n_lost;
    record_child_t children[MAX_PENDING]; /* forked children's reports, in the order they came */
    size_t n_children;
} record_channel_t;

static bool
record_channel_open(record_channel_t *ch)
{
    int sv[2];
    struct stat sb;
    memset(ch, 0, sizeof(*ch));
    ch->fd = ch->child_fd = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return false;
    if (fstat(sv[1], &sb) != 0) {
        close(sv[0]);
        close(sv[1]);
        return false;
    }
    ch->fd = sv[0];
    ch->child_fd = sv[1];
    char value[64];
    snprintf(value, sizeof(value), "%d:%llu", sv[1], (unsigned long long)sb.st_ino);
    return setenv("RPERF_GVL_STATUS_FD", value, 1) == 0;
}

static void
record_channel_close(record_channel_t *ch)
{
    if (ch->fd >= 0)
        close(ch->fd);
    if (ch->child_fd >= 0)
        close(ch->child_fd);
    ch->fd = ch->child_fd = -1;
    ch->n_pending = 0;
}

static void
pending_remove(record_channel_t *ch, pid_t pid)
{
    for (size_t i = 0; i < ch->n_pending; i++)
        if (ch->pending[i] == pid) {
            ch->n_pending--;
            ch->pending[i] = ch->pending[ch->n_pending];
            ch->pending_forked[i] = ch->pending_forked[ch->n_pending];
            return;
        }
}

/* A pending process gone without a word: a forked child is named as lost
 * (the program's own report has its own message). */
static void
pending_lose(record_channel_t *ch, size_t i)
{
    if (ch->pending_forked[i] && ch->n_lost < MAX_PENDING)
        ch->lost[ch->n_lost++] = ch->pending[i];
    pending_remove(ch, ch->pending[i]);
}

/* A process that no longer runs: gone, or a zombie nobody has reaped yet. */
static bool
process_gone(pid_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    char path[64], stat_line[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(stat_line, 1, sizeof(stat_line) - 1, f);
    fclose(f);
    stat_line[n] = '\0';
    const char *paren = strrchr(stat_line, ')'); /* the name may hold spaces and parentheses */
    return paren && (paren[2] == 'Z' || paren[2] == 'X');
}

/* Forgets the pending processes that ended without a word (killed, exit!). */
static void
record_channel_prune(record_channel_t *ch)
{
    for (size_t i = ch->n_pending; i-- > 0;)
        if (process_gone(ch->pending[i]))
            pending_lose(ch, i);
}

/* ---- signals and the terminal ---------------------------------------------------------- */

/* The program runs in its own process group. Signals sent to record are
 * passed on to that group: whoever stops `record` means the program. When
 * record's stdin is a terminal and record is in the foreground, the
 * program's group gets the terminal (Ctrl-C, Ctrl-Z and reads go to it) and
 * record takes it back when the program stops or ends. SIGTSTP is passed on
 * too; a program that stops stops record, as a shell's job stops. */
static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};
#define N_FORWARDED (sizeof(forwarded_signals) / sizeof(forwarded_signals[0]))
static volatile sig_atomic_t record_pgid; /* the program's process group; 0 before and after */

static void
forward_signal(int sig)
{
    int saved = errno;
    if (record_pgid > 0)
        kill(-(pid_t)record_pgid, sig);
    errno = saved;
}

static void
child_changed(int sig)
{
    (void)sig; /* only wakes ppoll */
}

static volatile sig_atomic_t record_continued; /* set by SIGCONT: record was stopped */

static void
continued(int sig)
{
    (void)sig;
    record_continued = 1;
}

typedef struct record_signals {
    struct sigaction old_act[N_FORWARDED];
    struct sigaction old_chld, old_cont;
    sigset_t old_mask;  /* record's mask before the run, the program's */
    sigset_t wait_mask; /* during ppoll: SIGCHLD let through */
    bool terminal;      /* stdin is a terminal record was in the foreground of */
} record_signals_t;

/* Installs the handlers: forwarding for the signals not ignored when record
 * started (nohup stays nohup, and so does a script's background job with
 * SIGINT and SIGQUIT ignored), SIGCHLD for the wait. The forwarded signals,
 * SIGCHLD and SIGTTOU stay blocked until the program has started. */
static void
record_signals_install(record_signals_t *sigs)
{
    struct sigaction fwd = {0}, chld = {0};
    sigset_t block;
    sigemptyset(&block);
    fwd.sa_handler = forward_signal;
    sigemptyset(&fwd.sa_mask);
    chld.sa_handler = child_changed;
    sigemptyset(&chld.sa_mask);
    for (size_t i = 0; i < N_FORWARDED; i++) {
        sigaction(forwarded_signals[i], NULL, &sigs->old_act[i]);
        sigaddset(&block, forwarded_signals[i]);
    }
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGTTOU);
    sigprocmask(SIG_BLOCK, &block, &sigs->old_mask);
    for (size_t i = 0; i < N_FORWARDED; i++)
        if (sigs->old_act[i].sa_handler != SIG_IGN)
            sigaction(forwarded_signals[i], &fwd, NULL);
    sigaction(SIGCHLD, &chld, &sigs->old_chld);
    chld.sa_handler = continued;
    sigaction(SIGCONT, &chld, &sigs->old_cont);
    sigs->wait_mask = sigs->old_mask;
    sigdelset(&sigs->wait_mask, SIGCHLD);
    sigs->terminal = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

/* In the program, before exec: record's dispositions and mask as they were. */
static void
record_signals_restore_for_child(const record_signals_t *sigs)
{
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction(forwarded_signals[i], &sigs->old_act[i], NULL);
    sigaction(SIGCHLD, &sigs->old_chld, NULL);
    sigaction(SIGCONT, &sigs->old_cont, NULL);
    sigprocmask(SIG_SETMASK, &sigs->old_mask, NULL);
}

/* After the run: record's own handlers and mask back. */
static void
record_signals_uninstall(const record_signals_t *sigs)
{
    record_pgid = 0;
    record_signals_restore_for_child(sigs);
}

/* Gives the terminal to the program's group when record holds it. */
static void
terminal_give(const record_signals_t *sigs, pid_t pgid)
{
    if (sigs->terminal && tcgetpgrp(STDIN_FILENO) == getpgrp())
        tcsetpgrp(STDIN_FILENO, pgid);
}

/* Takes the terminal back for record's group (SIGTTOU is blocked: record
 * asks from the background). */
static void
terminal_take(const record_signals_t *sigs)
{
    if (!sigs->terminal)
        return;
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &old);
    tcsetpgrp(STDIN_FILENO, getpgrp());
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The program stopped (Ctrl-Z, SIGSTOP, a read from the terminal in the
 * background): record stops with the same signal, so its shell sees the job
 * stop. Once continued (fg, bg), the program continues, with the terminal
 * if record has it. When nothing can stop record (no job control: the
 * kernel drops the stop), a Ctrl-Z is undone; a program stopped for the
 * terminal stays stopped, since continuing it would only stop it again. */
static void
record_job_stopped(const record_signals_t *sigs, pid_t pgid, int sig)
{
    terminal_take(sigs);
    struct sigaction dfl = {0}, old;
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (sig != SIGSTOP)
        sigaction(sig, &dfl, &old);
    sigset_t unblock, mask;
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    record_continued = 0;
    sigprocmask(SIG_UNBLOCK, &unblock, &mask);
    raise(sig);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    if (sig != SIGSTOP)
        sigaction(sig, &old, NULL);
    if (!record_continued && (sig == SIGTTIN || sig == SIGTTOU)) {
        say("the program stopped for the terminal, which record cannot give it; it stays stopped until "
            "continued (kill -CONT -%d)",
            (int)pgid);
        return;
    }
    terminal_give(sigs, pgid);
    kill(-pgid, SIGCONT);
}

/* What the command line asked for. */
typedef struct record_opts {
    const char *output;
    const char *frequency; /* NULL: autorecord's default */
    const char *color;
    const char *html; /* NULL: no page */
    char **command;
} record_opts_t;

/* One run: where the report and the page go. */
typedef struct record_run {
    record_opts_t opts;
    record_target_t target;
    rga_output_t page;
    bool have_page;
    record_channel_t channel;
    bool taken;           /* a report was loaded and put at the output */
    rga_report_t *report; /* the last one taken, NULL when it did not load */
    rga_status_t load_st; /* its load's status */
    rga_error_t load_err; /* and error */
    int commit_rc;        /* putting it at the output: EXIT_OK or EXIT_IO */
} record_run_t;

/* Returns EXIT_OK, -1 after --help, or a usage error's code. */
static int
record_parse_args(int argc, char **argv, record_opts_t *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"html", required_argument, NULL, 'H'},
        {"frequency", required_argument, NULL, 'F'},
        {"color", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (record_opts_t){.output = "report.json", .color = "auto"};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:o:", longopts, NULL)) != -1) {
        long v;
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'H': o->html = optarg; break;
        case 'F':
            if (!parse_long(optarg, RPERF_FREQUENCY_MIN, RPERF_FREQUENCY_MAX, &v))
                return fail_usage("--frequency %s: expected an integer from " RPERF_STR(
                                      RPERF_FREQUENCY_MIN) " to " RPERF_STR(RPERF_FREQUENCY_MAX) " (Hz)",
                                  optarg);
            o->frequency = optarg;
            break;
        case 'C':
            if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
                return fail_usage("--color %s: expected auto, always or never", optarg);
            o->color = optarg;
            break;
        case 'h': usage(stdout); return -1;
        default: return fail_option(c, argv);
        }
    }
    if (optind >= argc)
        return fail_usage("%s", "record: no command given (record [-o FILE] -- ruby app.rb)");
    o->command = &argv[optind];
    return EXIT_OK;
}

/* Checks the report's and the page's outputs and creates their temporary
 * files, before the program runs: a run is never lost to an unwritable path. */
static int
record_open_outputs(record_run_t *run)
{
    int rc = record_target_open(&run->target, run->opts.output);
    if (rc != EXIT_OK || !run->opts.html)
        return rc;
    rga_error_t perr;
    memset(&perr, 0, sizeof(perr));
    rga_status_t pst = rga_output_open(&run->page, run->opts.html, &perr);
    if (pst != RGA_OK) {
        report_error(&perr);
        record_target_close(&run->target);
        return exit_for(pst, false);
    }
    if (run->page.fp && run->page.kind != 1)
        fcntl(fileno(run->page.fp), F_SETFD, FD_CLOEXEC); /* not the program's to inherit */
    run->have_page = true;
    return EXIT_OK;
}

static void
record_discard_outputs(record_run_t *run)
{
    record_channel_close(&run->channel);
    record_target_close(&run->target);
    if (run->have_page)
        rga_output_discard(&run->page);
    run->have_page = false;
}

/* The program's environment: autorecord on RUBYOPT, the library (and a build
 * tree's extension) on RUBYLIB, the report's temporary, the frequency. */
static int
record_environment(record_run_t *run, const char *libdir, bool from_build)
{
    /* RUBYLIB, not -I in RUBYOPT: RUBYOPT splits on spaces. A binary run from
     * its build tree loads the extension it was built with. */
    char dirs[2 * PATH_MAX + 2];
    if (from_build && RPERF_GVL_SOURCE_EXTDIR[0])
        snprintf(dirs, sizeof(dirs), "%s:%s", libdir, RPERF_GVL_SOURCE_EXTDIR);
    else
        snprintf(dirs, sizeof(dirs), "%s", libdir);
    const char *old = getenv("RUBYOPT");
    size_t len = (old ? strlen(old) : 0) + 32;
    char *rubyopt = malloc(len);
    if (!rubyopt || !prepend_path("RUBYLIB", dirs)) {
        free(rubyopt);
        return EXIT_SOFTWARE;
    }
    snprintf(rubyopt, len, "-rrperf/autorecord%s%s", old && *old ? " " : "", old ? old : "");
    setenv("RUBYOPT", rubyopt, 1);
    free(rubyopt);
    setenv("RPERF_GVL_OUTPUT", run->target.tmp, 1);
    if (run->opts.frequency)
        setenv("RPERF_GVL_FREQUENCY", run->opts.frequency, 1);
    /* Where autorecord puts the report itself if record is gone by then. */
    if (!run->target.in_place)
        setenv("RPERF_GVL_FINAL_OUTPUT", run->target.path, 1);
    else
        unsetenv("RPERF_GVL_FINAL_OUTPUT");
    if (!record_channel_open(&run->channel)) {
        say("cannot make the status channel: %s", strerror(errno));
        return EXIT_SOFTWARE;
    }
    return EXIT_OK;
}

/* Starts the program in its own process group (with the terminal when
 * record has it). Its parent's death sends it SIGTERM: when record is
 * killed, the program is not left running unseen. Returns the pid, or -1
 * (errno set) when fork failed. */
static pid_t
record_start(char **command, record_channel_t *ch, const record_signals_t *sigs)
{
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        if (sigs->terminal)
            tcsetpgrp(STDIN_FILENO, getpid()); /* SIGTTOU is still blocked */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        record_signals_restore_for_child(sigs);
        if (getppid() != parent) /* record died before prctl */
            raise(SIGTERM);
        fcntl(ch->child_fd, F_SETFD, 0); /* the program's to inherit */
        execvp(command[0], command);
        say("cannot run %s: %s", command[0], strerror(errno));
        _exit(EXIT_NOEXEC);
    }
    int saved = errno;
    if (pid > 0) {
        setpgid(pid, pid); /* also here: whichever runs first */
        terminal_give(sigs, pid);
        record_pgid = pid;
    }
    close(ch->child_fd);
    ch->child_fd = -1;
    errno = saved;
    return pid;
}

/* ---- the report ----------------------------------------------------------------------- */

/* Loads the report the program wrote and puts it at the output. The report
 * is kept even when it does not load: it is the data. */
static void
record_take_report(record_run_t *run)
{
    rga_report_free(run->report);
    run->report = NULL;
    rga_error_clear(&run->load_err);
    run->load_st = rga_report_load_file(run->target.tmp, &run->report, &run->load_err);
    run->commit_rc = record_target_commit(&run->target, run->opts.output);
    run->taken = true;
}

static bool
report_waiting(const record_run_t *run)
{
    struct stat sb;
    return stat(run->target.tmp, &sb) == 0 && sb.st_size > 0;
}

/* path with ".PID" before its ending (.json.gz, .json or any extension). */
static void
child_output_path(const char *path, pid_t pid, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *ext = ends_with(name, ".json.gz") ? name + strlen(name) - 8 : strrchr(name, '.');
    if (!ext || ext == name)
        ext = name + strlen(name);
    snprintf(out, size, "%.*s.%d%s", (int)(ext - path), path, (int)pid, ext);
}

/* A forked child's report: moved beside the output (a device output's
 * children stay in the temporary directory, and record says where). */
static void
record_child_report(record_run_t *run, pid_t pid, const char *path)
{
    record_channel_t *ch = &run->channel;
    if (ch->n_children == MAX_PENDING)
        return;
    record_child_t *c = &ch->children[ch->n_children++];
    c->pid = pid;
    snprintf(c->path, sizeof(c->path), "%s", path);
    if (run->target.in_place)
        return;
    char final[sizeof(c->path)];
    child_output_path(run->target.path, pid, final, sizeof(final));
    if (rename(path, final) == 0) {
        snprintf(c->path, sizeof(c->path), "%s", final);
        c->moved = true;
    }
}

static void
record_channel_message(record_run_t *run, const char *msg)
{
    record_channel_t *ch = &run->channel;
    char word[16];
    int pid = 0, used = 0;
    if (sscanf(msg, "%15s %d%n", word, &pid, &used) < 2)
        return;
    bool forked = strcmp(word, "forked") == 0;
    if (forked || strcmp(word, "started") == 0) {
        ch->started = true;
        if (ch->n_pending < MAX_PENDING) {
            ch->pending_forked[ch->n_pending] = forked;
            ch->pending[ch->n_pending++] = pid;
        }
        return;
    }
    pending_remove(ch, pid);
    if (strcmp(word, "child") == 0) {
        if (msg[used] == ' ')
            record_child_report(run, pid, msg + used + 1);
        (void)send(ch->fd, "ok", 2, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (strcmp(word, "written") == 0) {
        ch->failed = false;
        if (report_waiting(run))
            record_take_report(run);
        (void)send(ch->fd, "ok", 2, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (strcmp(word, "failed") == 0) {
        ch->failed = true;
        snprintf(ch->reason, sizeof(ch->reason), "%s", msg[used] == ' ' ? msg + used + 1 : "unknown error");
    }
}

/* Reads every message waiting, without blocking; closes the channel when
 * every process that could write to it is gone. */
static void
record_channel_read(record_run_t *run)
{
    record_channel_t *ch = &run->channel;
    char msg[512];
    while (ch->fd >= 0) {
        ssize_t n = recv(ch->fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);
        if (n > 0) {
            msg[n] = '\0';
            record_channel_message(run, msg);
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            /* Every process that held the other end is gone. */
            close(ch->fd);
            ch->fd = -1;
            while (ch->n_pending > 0)
                pending_lose(ch, ch->n_pending - 1);
        } else {
            break;
        }
    }
}

/* ---- the wait -------------------------------------------------------------------------- */

/* Waits for the program, answering autorecord meanwhile, and then for the
 * Ruby processes that started and have not said what became of their report
 * (a shell's child, signalled with the whole group). Returns the program's
 * wait status. */
static int
record_wait(record_run_t *run, pid_t pid, const record_signals_t *sigs)
{
    record_channel_t *ch = &run->channel;
    int status = 0;
    bool ended = false;
    for (;;) {
        int st;
        pid_t w = 0;
        while (!ended && (w = waitpid(pid, &st, WNOHANG | WUNTRACED)) == pid) {
            if (WIFSTOPPED(st)) {
                record_job_stopped(sigs, pid, WSTOPSIG(st));
            } else {
                ended = true;
                status = st;
            }
        }
        if (!ended && w < 0 && errno != EINTR) { /* not our child any more: cannot happen */
            ended = true;
            status = 0;
        }
        record_channel_read(run);
        if (ended)
            record_channel_prune(ch);
        if (ended && ch->n_pending == 0)
            break;
        struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
        struct timespec second = {1, 0};
        ppoll(&pfd, ch->fd >= 0 ? 1 : 0, ended ? &second : NULL, &sigs->wait_mask);
    }
    terminal_take(sigs);
    return status;
}

/* One line per forked child's report: where it is and its totals. */
static void
record_show_children(const record_run_t *run)
{
    const record_channel_t *ch = &run->channel;
    for (size_t i = 0; i < ch->n_children; i++) {
        const record_child_t *c = &ch->children[i];
        rga_report_t *r = NULL;
        rga_error_t err;
        if (rga_report_load_file(c->path, &r, &err) != RGA_OK) {
            report_error(&err);
            continue;
        }
        int64_t run_ns = 0, wait_ns = 0;
        for (size_t t = 0; t < r->n_threads; t++) {
            run_ns += r->threads[t].state_ns[RGA_STATE_RUNNING];
            wait_ns += r->threads[t].state_ns[RGA_STATE_GVL_WAIT];
        }
        char a[32], b[32];
        say("report of forked process %d written to %s (%zu threads, running %s, GVL wait %s)", (int)c->pid, c->path,
            r->n_threads, rga_format_duration(run_ns, a, sizeof(a)), rga_format_duration(wait_ns, b, sizeof(b)));
        rga_report_free(r);
    }
    for (size_t i = 0; i < ch->n_lost; i++)
        say("forked process %d ended without writing its report (killed, or it ended with exit!)", (int)ch->lost[i]);
}

/* The summary on stdout, then the page; returns the page's exit code. */
static int
record_show(record_run_t *run, const rga_report_t *r, bool committed, rga_error_t *err, rga_status_t *st)
{
    rga_view_opts_t opts = {0};
    opts.color = use_color(run->opts.color, STDOUT_FILENO);
    opts.columns = terminal_width();
    fflush(stdout);
    *st = rga_render_report(r, "summary", &opts, stdout, err);
    if (committed)
        say("report written to %s", run->opts.output);
    record_show_children(run);
    if (!run->have_page)
        return EXIT_OK;
    rga_error_t perr;
    memset(&perr, 0, sizeof(perr));
    rga_view_opts_t page_opts = {0};
    rga_status_t pst = rga_render_report(r, "html", &page_opts, run->page.fp, &perr);
    if (pst == RGA_OK)
        pst = rga_output_close(&run->page, NULL, NULL, &perr);
    else
        rga_output_discard(&run->page);
    run->have_page = false;
    if (pst == RGA_OK) {
        say("page written to %s", run->opts.html);
        return EXIT_OK;
    }
    report_error(&perr);
    return exit_for(pst, false);
}

/* No report came: says why, as precisely as the channel tells. */
static int
record_no_report(record_run_t *run, int status, int child_exit)
{
    const char *output = run->opts.output;
    const record_channel_t *ch = &run->channel;
    int rc = child_exit;
    if (ch->failed) {
        say("%s: cannot write the report: %s; the program's exit status was %d", output, ch->reason, child_exit);
        rc = EXIT_IO;
    } else if (ch->started) {
        say("the program ended without writing its report (killed, or it ended with exit!); %s was not written "
            "(exit status %d)",
            output, child_exit);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NOEXEC) {
        rc = EXIT_NOEXEC;
    } else {
        say("the program wrote no report (it did not load the profiler: not a Ruby program?); %s was not "
            "written (exit status %d)",
            output, child_exit);
    }
    record_show_children(run);
    rga_report_free(run->report); /* a report taken before a later one failed */
    run->report = NULL;
    record_discard_outputs(run);
    return rc;
}

/* After the program and its Ruby processes ended: the report that came
 * (a program not speaking on the channel may still have written one), its
 * summary and page; the exit code. */
static int
record_finish(record_run_t *run, int status)
{
    int child_exit = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (!run->channel.failed && report_waiting(run))
        record_take_report(run);
    if (run->channel.failed || !run->taken)
        return record_no_report(run, status, child_exit);
    int rc = run->commit_rc;
    rga_status_t st = run->load_st;
    rga_error_t *err = &run->load_err;
    if (st == RGA_OK) {
        int page_rc = record_show(run, run->report, rc == EXIT_OK, err, &st);
        if (rc == EXIT_OK)
            rc = page_rc;
    } else {
        snprintf(err->file, sizeof(err->file), "%s", run->opts.output);
    }
    rga_report_free(run->report);
    run->report = NULL;
    record_discard_outputs(run); /* the report did not load: no page */
    if (st != RGA_OK) {
        report_error(err);
        if (rc == EXIT_OK && !child_exit)
            rc = exit_for(st, true);
    }
    return rc != EXIT_OK ? rc : child_exit; /* an output not written: 74 whatever the program did */
}

int
record_main(int argc, char **argv)
{
    record_run_t run;
    memset(&run, 0, sizeof(run));
    int rc = record_parse_args(argc, argv, &run.opts);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    char libdir[PATH_MAX];
    bool from_build;
    if (!find_libdir(libdir, sizeof(libdir), &from_build)) {
        say("cannot find the rperf library directory; set RPERF_GVL_LIBDIR");
        return EXIT_USAGE;
    }
    rc = record_open_outputs(&run);
    if (rc != EXIT_OK)
        return rc;
    rc = record_environment(&run, libdir, from_build);
    if (rc != EXIT_OK) {
        record_discard_outputs(&run);
        return rc;
    }
    record_signals_t sigs;
    record_signals_install(&sigs);
    pid_t pid = record_start(run.opts.command, &run.channel, &sigs);
    if (pid < 0) {
        int saved = errno;
        record_signals_uninstall(&sigs);
        say("fork: %s", strerror(saved));
        record_discard_outputs(&run);
        return EXIT_SOFTWARE;
    }
    sigset_t unblock;
    sigemptyset(&unblock);
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaddset(&unblock, forwarded_signals[i]);
    sigaddset(&unblock, SIGTTOU);
    sigprocmask(SIG_UNBLOCK, &unblock, NULL); /* SIGCHLD stays blocked but in ppoll */
    int status = record_wait(&run, pid, &sigs);
    record_signals_uninstall(&sigs);
    return record_finish(&run, status);
}
