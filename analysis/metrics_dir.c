/* metrics_dir.c — a metrics directory read as one set (metrics.h): its
 * per-process files and the aggregate of dead processes, under a lock,
 * with the files of dead processes optionally folded into the aggregate.
 *
 * Files: rperf-PID-START.json per process (START: the process's start time
 * in clock ticks, so a reused pid never names an old file), rperf-dead.json
 * (the aggregate, with the names it has added), rperf.lock (flock: readers
 * shared, a fold exclusive). Writers take no lock: each replaces only its
 * own file, by rename. Other names are ignored.
 *
 * Folding, under the exclusive lock: the new aggregate (old one plus every
 * dead process's file, and their names) is written by rename, then those
 * files are removed. A file still present whose name the aggregate lists
 * was added already (a fold stopped between the two steps) and is removed
 * without adding it again. So no count is lost or counted twice, and the
 * directory holds one file per live process plus one. A process is dead
 * when kill(PID, 0) says so or /proc/PID/stat shows another start time.
 * It does NOT parse (metrics_file.c) or render (metrics_text.c).
 */
#define _GNU_SOURCE
#include "metrics_internal.h"
#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define AGGREGATE_NAME "rperf-dead.json"
#define LOCK_NAME "rperf.lock"

typedef struct entry {
    char *name;
    rga_metrics_file_t *file;
    bool live;
    bool counted; /* already in the aggregate */
} entry_t;

typedef struct scan {
    const char *dir;
    unsigned flags;
    entry_t *entries;
    size_t n;
    rga_metrics_file_t *aggregate;
    bool aggregate_bad;
    int64_t skipped;
} scan_t;

/* "rperf-PID-START.json" with PID and START of 1 to 19 digits. */
static bool
process_name(const char *name, int64_t *pid, int64_t *start)
{
    if (strncmp(name, "rperf-", 6) != 0)
        return false;
    const char *s = name + 6;
    int64_t v[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        int digits = 0;
        for (; *s >= '0' && *s <= '9'; s++, digits++)
            if (digits < 19)
                v[k] = v[k] * 10 + (*s - '0');
        if (digits == 0 || digits > 18 || *s != (k == 0 ? '-' : '.'))
            return false;
        s++;
    }
    if (strcmp(s, "json") != 0)
        return false;
    *pid = v[0];
    *start = v[1];
    return true;
}

/* Field 22 of /proc/PID/stat (the start time in clock ticks), or 0. */
static int64_t
start_ticks_of(int64_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
    if (!p)
        return 0;
    /* From the ')' closing field 2, each step moves to the space before the next field. */
    for (int field = 2; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoll(p + 1, NULL, 10) : 0;
}

static bool
alive(int64_t pid, int64_t start_ticks)
{
    if (pid <= 0 || pid > INT_MAX)
        return false;
    if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
        return false;
    int64_t now = start_ticks > 0 ? start_ticks_of(pid) : 0;
    return now == 0 || now == start_ticks;
}

static rga_status_t path_error(rga_error_t *err, const char *path, rga_status_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static rga_status_t
path_error(rga_error_t *err, const char *path, rga_status_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rga_error_vset_at(err, code, path, NULL, fmt, ap);
    va_end(ap);
    return code;
}

/* Reads and parses DIR/name. */
static rga_status_t
load(const char *dir, const char *name, rga_metrics_file_t **out, rga_error_t *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return path_error(err, path, RGA_ERR_IO, "cannot open: %s", strerror(errno));
    struct stat st;
    rga_status_t rc = RGA_OK;
    if (fstat(fd, &st) != 0)
        rc = path_error(err, path, RGA_ERR_IO, "cannot read: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = path_error(err, path, RGA_ERR_IO, "not a regular file");
    else if (st.st_size > RPERF_METRICS_MAX_FILE_BYTES)
        rc = path_error(err, path, RGA_ERR_SCHEMA, "%lld bytes (at most %ld)", (long long)st.st_size,
                        RPERF_METRICS_MAX_FILE_BYTES);
    if (rc != RGA_OK) {
        close(fd);
        return rc;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t len = 0;
    ssize_t n = 1;
    while (buf && n > 0 && len <= (size_t)st.st_size) {
        n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
        len += n > 0 ? (size_t)n : 0;
    }
    int e = errno;
    close(fd);
    if (!buf)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
    if (n < 0) {
        free(buf);
        return path_error(err, path, RGA_ERR_IO, "cannot read: %s", strerror(e));
    }
    rc = rga_metrics_parse(buf, len, path, out, err);
    free(buf);
    return rc;
}

static int
by_name(const void *a, const void *b)
{
    return strcmp(((const entry_t *)a)->name, ((const entry_t *)b)->name);
}

static void
scan_free(scan_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->entries[i].name);
        rga_metrics_file_free(s->entries[i].file);
    }
    free(s->entries);
    rga_metrics_file_free(s->aggregate);
}

/* A bad file: an error, or with SKIP_BAD a count. */
static rga_status_t
bad_file(scan_t *s, rga_status_t st)
{
    if (!(s->flags & RGA_METRICS_SKIP_BAD))
        return st;
    s->skipped++;
    return RGA_OK;
}

static bool
listed(const rga_metrics_file_t *agg, const char *name)
{
    for (size_t i = 0; agg && i < agg->n_folded; i++)
        if (strcmp(agg->folded[i], name) == 0)
            return true;
    return false;
}

static rga_status_t
scan_dir(scan_t *s, rga_error_t *err)
{
    DIR *d = opendir(s->dir);
    if (!d)
        return path_error(err, s->dir, RGA_ERR_IO, "cannot read the metrics directory: %s", strerror(errno));
    size_t cap = 0;
    bool has_aggregate = false;
    rga_status_t st = RGA_OK;
    struct dirent *e;
    while (st == RGA_OK && (e = readdir(d))) {
        int64_t pid, start;
        if (strcmp(e->d_name, AGGREGATE_NAME) == 0) {
            has_aggregate = true;
            continue;
        }
        if (!process_name(e->d_name, &pid, &start))
            continue;
        if (s->n == RPERF_METRICS_MAX_FILES) {
            st = bad_file(s, path_error(err, s->dir, RGA_ERR_SCHEMA, "more than %d metrics files",
                                        RPERF_METRICS_MAX_FILES));
            continue;
        }
        if (s->n == cap) {
            cap = cap ? cap * 2 : 16;
            entry_t *p = realloc(s->entries, cap * sizeof(*p));
            if (!p) {
                st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
                break;
            }
            s->entries = p;
        }
        memset(&s->entries[s->n], 0, sizeof(entry_t));
        if (!(s->entries[s->n].name = strdup(e->d_name)))
            st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
        else
            s->n++;
    }
    closedir(d);
    if (st != RGA_OK)
        return st;
    if (s->n > 1)
        qsort(s->entries, s->n, sizeof(*s->entries), by_name);
    if (has_aggregate && (st = load(s->dir, AGGREGATE_NAME, &s->aggregate, err)) != RGA_OK) {
        s->aggregate_bad = true;
        if ((st = bad_file(s, st)) != RGA_OK)
            return st;
    }
    for (size_t i = 0; i < s->n; i++) {
        entry_t *en = &s->entries[i];
        if (listed(s->aggregate, en->name)) {
            en->counted = true;
            continue;
        }
        int64_t pid = 0, start = 0;
        process_name(en->name, &pid, &start);
        st = load(s->dir, en->name, &en->file, err);
        if (st == RGA_OK && (en->file->pid != pid || en->file->start_ticks != start)) {
            st = rga_error_set(err, RGA_ERR_SCHEMA, "pid %lld and start %lld do not match the file's name",
                               (long long)en->file->pid, (long long)en->file->start_ticks);
            rga_metrics_file_free(en->file);
            en->file = NULL;
        }
        if (st != RGA_OK) {
            if ((st = bad_file(s, st)) != RGA_OK)
                return st;
            continue;
        }
        en->live = alive(pid, start);
    }
    return RGA_OK;
}

/* Writes the new aggregate: the old one plus the dead processes' files. */
static bool
fold(scan_t *s)
{
    size_t dead = 0;
    for (size_t i = 0; i < s->n; i++)
        dead += s->entries[i].file && !s->entries[i].live;
    if (dead == 0 || s->aggregate_bad)
        return false;
    rga_error_t err;
    rga_metrics_set_t *set = rga_metrics_set_new();
    rga_metrics_file_t *agg = NULL;
    bool ok = set && (!s->aggregate || rga_metrics_set_add(set, s->aggregate, false, &err) == RGA_OK);
    for (size_t i = 0; ok && i < s->n; i++)
        if (s->entries[i].file && !s->entries[i].live)
            ok = rga_metrics_set_add(set, s->entries[i].file, false, &err) == RGA_OK;
    ok = ok && rga_metrics_set_to_file(set, &agg, &err) == RGA_OK;
    rga_metrics_set_free(set);
    ok = ok && (agg->folded = calloc(dead, sizeof(char *))) != NULL;
    for (size_t i = 0; ok && i < s->n; i++)
        if (s->entries[i].file && !s->entries[i].live)
            ok = (agg->folded[agg->n_folded++] = strdup(s->entries[i].name)) != NULL;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", s->dir, AGGREGATE_NAME);
    rga_output_t out;
    if (ok && rga_output_open(&out, path, &err) == RGA_OK) {
        if (rga_metrics_write(agg, out.fp, &err) == RGA_OK)
            ok = rga_output_close(&out, NULL, NULL, &err) == RGA_OK;
        else {
            rga_output_discard(&out);
            ok = false;
        }
    } else {
        ok = false;
    }
    if (!ok) {
        rga_metrics_file_free(agg);
        return false;
    }
    for (size_t i = 0; i < s->n; i++) {
        entry_t *en = &s->entries[i];
        if (en->file && !en->live) {
            snprintf(path, sizeof(path), "%s/%s", s->dir, en->name);
            unlink(path);
            rga_metrics_file_free(en->file);
            en->file = NULL;
        }
    }
    rga_metrics_file_free(s->aggregate);
    s->aggregate = agg;
    return true;
}

/* Files the aggregate lists that a stopped fold left behind. */
static void
remove_counted(const scan_t *s)
{
    char path[PATH_MAX];
    for (size_t i = 0; i < s->n; i++) {
        if (s->entries[i].counted) {
            snprintf(path, sizeof(path), "%s/%s", s->dir, s->entries[i].name);
            unlink(path);
        }
    }
}

/* ".rperf-PID-START.json.tmp" of a writer that died before its rename. */
static void
remove_stale_temps(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char name[NAME_MAX + 1], path[PATH_MAX];
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        int64_t pid, start;
        if (e->d_name[0] != '.' || n < 5 || strcmp(e->d_name + n - 4, ".tmp") != 0)
            continue;
        snprintf(name, sizeof(name), "%.*s", (int)(n - 5), e->d_name + 1);
        if (process_name(name, &pid, &start) && !alive(pid, start)) {
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
}

rga_status_t
rga_metrics_render_dir(const char *dir, unsigned flags, FILE *out, rga_error_t *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return path_error(err, dir, RGA_ERR_IO, "cannot read the metrics directory: %s", strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return path_error(err, dir, RGA_ERR_IO, "not a directory");
    char lock_path[PATH_MAX];
    if ((size_t)snprintf(lock_path, sizeof(lock_path), "%s/%s", dir, LOCK_NAME) >= sizeof(lock_path) - NAME_MAX)
        return path_error(err, dir, RGA_ERR_IO, "the directory name is too long");
    bool folding = flags & RGA_METRICS_FOLD;
    int lock = open(lock_path, (folding ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0666);
    if (lock < 0 && folding)
        lock = open(lock_path, O_RDONLY | O_CLOEXEC);
    /* Without a lock file (a directory no writer has used yet, read only)
     * the files are read as they are, and nothing is folded. */
    if (lock >= 0 && flock(lock, folding ? LOCK_EX : LOCK_SH) != 0) {
        close(lock);
        lock = -1;
    }
    folding = folding && lock >= 0;

    scan_t s = {.dir = dir, .flags = flags};
    rga_status_t rc = scan_dir(&s, err);
    if (rc == RGA_OK && folding) {
        remove_counted(&s);
        remove_stale_temps(dir);
        fold(&s);
    }
    rga_metrics_set_t *set = rc == RGA_OK ? rga_metrics_set_new() : NULL;
    if (rc == RGA_OK && !set)
        rc = rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
    if (rc == RGA_OK && s.aggregate)
        rc = rga_metrics_set_add(set, s.aggregate, false, err);
    int64_t live = 0, dead = 0;
    for (size_t i = 0; rc == RGA_OK && i < s.n; i++) {
        const entry_t *en = &s.entries[i];
        if (!en->file)
            continue;
        live += en->live;
        dead += !en->live;
        rc = rga_metrics_set_add(set, en->file, en->live, err);
    }
    if (lock >= 0)
        close(lock); /* releases the lock */
    if (rc == RGA_OK) {
        rga_metrics_set_count_files(set, live, dead, s.skipped);
        rc = rga_metrics_set_render(set, flags, out, err);
    }
    rga_metrics_set_free(set);
    scan_free(&s);
    return rc;
}
