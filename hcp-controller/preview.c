#include "preview.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/error.h"
#include "base/json.h"
#include "policy/guard.h"
#include "policy/ics.h"
#include "policy/manifest.h"
#include "policy/policy.h"
#include "schedule/minleft.h"
#include "schedule/schedule.h"

#define MAX_FILES 64
#define MAX_POLICIES 256
#define MAX_COUNT 100000
#define MAX_INPUT (16 * 1024 * 1024) /* largest manifest file read */

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_REFUSED 3

static const char *PROG = "hcp-controller preview";

void preview_usage(FILE *f)
{
    fprintf(f,
            "Usage: hcp-controller preview -f POLICY [-f POLICY ...] [--from RFC3339]\n"
            "                              [--count N] [--change KIND] [-o table|json|ics]\n"
            "                              [--not-before RFC3339]\n"
            "                              [--check --guard-config FILE [--restrictive-until TIME]]\n"
            "\n"
            "Shows when changes are permitted by HostedChangeManagementPolicy manifests.\n"
            "Several -f options mean the intersection of their schedules (as a NodePool\n"
            "within its HostedCluster).\n"
            "\n"
            "Options:\n"
            "  -f, --file POLICY    policy manifest, YAML or JSON ('-' reads standard input);\n"
            "                       every HostedChangeManagementPolicy document in it is used\n"
            "      --from TIME      RFC 3339 instant to start from (default: now)\n"
            "      --count N        list at most N windows (default: 10, at most %d)\n"
            "      --change KIND    the windows of one kind of change, for policies whose\n"
            "                       exclusions have a scope: control-plane (a z-stream or\n"
            "                       configuration), control-plane-minor, nodes (a NodePool's\n"
            "                       z-stream or configuration) or nodes-minor; default: all\n"
            "                       (every exclusion applies)\n"
            "  -o, --output FORMAT  table (default), json, or ics (an RFC 5545 calendar of\n"
            "                       the windows and of the exclusions with their reasons)\n"
            "      --not-before TIME  a held change may not start before TIME whatever\n"
            "                       the windows (the release waves' soak end, as explain's\n"
            "                       Waves: line says): its first start, and in ics the\n"
            "                       windows before it marked\n"
            "      --check          judge the schedule against the guard rails of\n"
            "                       --guard-config (a ConfigMap or mapping, YAML or JSON)\n"
            "                       over the 12 months from --from, as admission does\n"
            "      --restrictive-until TIME  with --check: a stanza's RestrictiveUntil\n"
            "  -h, --help           show this help\n"
            "\n"
            "Windows are the maximal permitted intervals ending after --from; one that\n"
            "started earlier is shown with its true start. Windows starting 10 years or\n"
            "more after --from are not listed. Exit status: 0 success (with --check: no\n"
            "guard rail fails), 1 I/O error, 2 bad usage or an invalid policy or guard\n"
            "rail configuration, 3 a guard rail fails (--check).\n",
            MAX_COUNT);
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", PROG);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    preview_usage(stderr);
    return EXIT_USAGE;
}

int preview_read_file(const char *path, char **data, size_t *len)
{
    FILE *f;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int is_stdin = strcmp(path, "-") == 0;

    *data = NULL;
    *len = 0;
    f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot open %s: %s\n", PROG, path, strerror(errno));
        return HCP_EIO;
    }
    for (;;) {
        size_t got;
        if (n == cap) {
            char *nb;
            if (cap >= MAX_INPUT) {
                fprintf(stderr, "%s: %s is larger than %d bytes\n", PROG, path, MAX_INPUT);
                goto fail;
            }
            cap = cap ? cap * 2 : 65536;
            if ((nb = realloc(buf, cap + 1)) == NULL) {
                fprintf(stderr, "%s: out of memory reading %s\n", PROG, path);
                goto fail;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                fprintf(stderr, "%s: cannot read %s: %s\n", PROG, path, strerror(errno));
                goto fail;
            }
            break;
        }
    }
    if (!is_stdin && fclose(f) != 0) {
        f = NULL;
        fprintf(stderr, "%s: cannot read %s: %s\n", PROG, path, strerror(errno));
        goto fail;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
fail:
    if (f != NULL && !is_stdin)
        fclose(f);
    free(buf);
    return HCP_EIO;
}

typedef struct opts {
    const char *files[MAX_FILES]; /* borrowed from argv */
    int n_files;
    sched_time_t from;
    long count;
    int format;                   /* FMT_TABLE, FMT_JSON or FMT_ICS */
    int check;                    /* --check */
    const char *guard_file;       /* --guard-config, borrowed from argv */
    int has_restrictive_until;    /* --restrictive-until given */
    sched_time_t restrictive_until;
    int change;                   /* --change: a policy_change_t, or -1 for all */
    sched_time_t not_before;      /* --not-before, 0 none */
} opts_t;

/* --change's words, in policy_change_t order. */
static const char *const change_names[POLICY_NCHANGES] = {"control-plane", "control-plane-minor",
                                                          "nodes", "nodes-minor"};

enum { FMT_TABLE, FMT_JSON, FMT_ICS };

/* Takes an option's value from "--name=value" or the next argument. */
static const char *value(int argc, char **argv, int *i, const char *arg, const char *name)
{
    size_t n = strlen(name);

    if (strncmp(arg, name, n) == 0 && arg[n] == '=')
        return arg + n + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);

    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || (name[1] == '-' && arg[n] == '='));
}

static int format_index(const char *v)
{
    static const char *const names[] = {"table", "json", "ics"};
    int i;

    for (i = 0; i < 3; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return -1;
}

/* Returns -1 to continue, or an exit status. */
static int parse_args(int argc, char **argv, opts_t *o)
{
    const char *from = NULL;
    int i;

    memset(o, 0, sizeof *o);
    o->count = 10;
    o->change = -1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            preview_usage(stdout);
            return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_RUNTIME;
        } else if (is_opt(a, "-f") || is_opt(a, "--file")) {
            if ((v = value(argc, argv, &i, a, "--file")) == NULL || v[0] == '\0')
                return usage_error("%s needs a file name", a);
            if (o->n_files == MAX_FILES)
                return usage_error("at most %d policy files are supported", MAX_FILES);
            o->files[o->n_files++] = v;
        } else if (is_opt(a, "--from")) {
            if ((v = value(argc, argv, &i, a, "--from")) == NULL)
                return usage_error("--from needs an RFC 3339 time");
            from = v;
        } else if (is_opt(a, "--count")) {
            char *end;
            long n;
            if ((v = value(argc, argv, &i, a, "--count")) == NULL)
                return usage_error("--count needs a number");
            errno = 0;
            n = strtol(v, &end, 10);
            if (errno != 0 || end == v || *end != '\0' || n < 1 || n > MAX_COUNT)
                return usage_error("--count: \"%.64s\" is not a number between 1 and %d", v,
                                   MAX_COUNT);
            o->count = n;
        } else if (is_opt(a, "-o") || is_opt(a, "--output")) {
            if ((v = value(argc, argv, &i, a, "--output")) == NULL)
                return usage_error("%s needs table, json or ics", a);
            if ((o->format = format_index(v)) < 0)
                return usage_error("unknown output format \"%.64s\" (use table, json or ics)",
                                   v);
        } else if (is_opt(a, "--change")) {
            if ((v = value(argc, argv, &i, a, "--change")) == NULL)
                return usage_error("--change needs a kind of change");
            for (o->change = POLICY_NCHANGES - 1; o->change >= 0; o->change--)
                if (strcmp(v, change_names[o->change]) == 0)
                    break;
            if (o->change < 0 && strcmp(v, "all") != 0)
                return usage_error("--change: \"%.64s\" is not one of all, control-plane, "
                                   "control-plane-minor, nodes, nodes-minor", v);
        } else if (is_opt(a, "--not-before")) {
            if ((v = value(argc, argv, &i, a, "--not-before")) == NULL ||
                sched_parse_rfc3339(v, &o->not_before) != 0 || o->not_before <= 0)
                return usage_error("--not-before needs an RFC 3339 time");
        } else if (strcmp(a, "--check") == 0) {
            o->check = 1;
        } else if (is_opt(a, "--guard-config")) {
            if ((v = value(argc, argv, &i, a, "--guard-config")) == NULL || v[0] == '\0')
                return usage_error("--guard-config needs a file name");
            o->guard_file = v;
        } else if (is_opt(a, "--restrictive-until")) {
            if ((v = value(argc, argv, &i, a, "--restrictive-until")) == NULL ||
                sched_parse_rfc3339(v, &o->restrictive_until) != 0)
                return usage_error("--restrictive-until needs an RFC 3339 time");
            o->has_restrictive_until = 1;
        } else {
            return usage_error("unknown argument \"%.64s\"", a);
        }
    }
    if (o->n_files == 0)
        return usage_error("at least one -f POLICY is required");
    if (o->check != (o->guard_file != NULL))
        return usage_error("--check and --guard-config go together");
    if (o->has_restrictive_until && !o->check)
        return usage_error("--restrictive-until is only used with --check");
    if (o->not_before && o->check)
        return usage_error("--not-before is not used with --check");
    if (from != NULL) {
        if (sched_parse_rfc3339(from, &o->from) != 0)
            return usage_error("--from: \"%.64s\" is not an RFC 3339 time", from);
        /* the engine covers the years 1970..9999 */
        if (o->from < 0 || o->from >= (sched_time_t)sched_days_from_civil(10000, 1, 1) * 86400)
            return usage_error("--from: \"%.64s\" is outside the years 1970..9999", from);
    } else {
        time_t now = time(NULL);
        if (now == (time_t)-1) {
            fprintf(stderr, "%s: cannot read the clock: %s\n", PROG, strerror(errno));
            return EXIT_RUNTIME;
        }
        o->from = (sched_time_t)now;
    }
    return -1;
}

typedef struct loaded {
    policy_t *p[MAX_POLICIES];         /* owned */
    const char *file[MAX_POLICIES];    /* borrowed: where each came from */
    int n;
    int change;                        /* opts_t.change */
    json_t *configmaps;                /* owned: the ConfigMaps of the files, for
                                          the policies' exclusion calendars */
} loaded_t;

/* policy_configmap_fn over the ConfigMaps of the files: by name, in the
 * policy's namespace or in none (a file often names neither). */
static const json_t *file_configmap(const char *ns, const char *name, void *ud)
{
    const loaded_t *l = ud;
    size_t i;
    json_t *cm;
    json_array_foreach(l->configmaps, i, cm) {
        const char *n = hcp_json_str(cm, "metadata.name");
        const char *cns = hcp_json_str(cm, "metadata.namespace");
        if (n && strcmp(n, name) == 0 && (!cns || !*cns || !*ns || strcmp(cns, ns) == 0)) {
            const json_t *data = json_object_get(cm, "data");
            return json_is_object(data) ? data : NULL;
        }
    }
    return NULL;
}

static bool is_configmap(const json_t *doc)
{
    const char *kind = hcp_json_str(doc, "kind"), *api = hcp_json_str(doc, "apiVersion");
    return kind && strcmp(kind, "ConfigMap") == 0 && (!api || strcmp(api, "v1") == 0);
}

/* Policy k's timeline for the kind of change asked for (a new reference). */
static sched_t *schedule_of(const loaded_t *l, int k)
{
    return l->change < 0 ? policy_schedule(l->p[k])
                         : policy_schedule_for(l->p[k], (policy_change_t)l->change);
}

/* Loads every HCMP document of a file. Returns -1 to continue, or an exit
 * status after printing why. */
static int load(const char *path, sched_time_t from, loaded_t *l)
{
    char err[POLICY_ERRLEN];
    char *data = NULL;
    size_t len, i;
    json_t *docs = NULL;
    int rc, found = 0, status = -1;

    if (preview_read_file(path, &data, &len) != 0)
        return EXIT_RUNTIME;
    rc = manifest_load(data, len, &docs, err, sizeof err);
    if (rc == HCP_ENOMEM) {
        fprintf(stderr, "%s: out of memory\n", PROG);
        status = EXIT_RUNTIME;
        goto done;
    }
    if (rc != 0) {
        fprintf(stderr, "%s: %s: %s\n", PROG, path, err);
        status = EXIT_USAGE;
        goto done;
    }
    for (i = 0; i < json_array_size(docs); i++) {
        json_t *doc = json_array_get(docs, i);
        policy_t *p;
        if (is_configmap(doc)) {
            if (json_array_append(l->configmaps, doc) != 0) {
                fprintf(stderr, "%s: out of memory\n", PROG);
                status = EXIT_RUNTIME;
                goto done;
            }
            continue;
        }
        if (!policy_is_hcmp(doc))
            continue;
        found = 1;
        if (l->n == MAX_POLICIES) {
            fprintf(stderr, "%s: at most %d policies are supported\n", PROG, MAX_POLICIES);
            status = EXIT_USAGE;
            goto done;
        }
        rc = policy_parse(doc, from, &p, err, sizeof err);
        if (rc == HCP_ENOMEM) {
            fprintf(stderr, "%s: out of memory\n", PROG);
            status = EXIT_RUNTIME;
            goto done;
        }
        if (rc != 0) {
            fprintf(stderr, "%s: %s: policy %s%s%s is invalid: %s\n", PROG, path,
                    p->namespace_, p->namespace_[0] ? "/" : "",
                    p->name[0] ? p->name : "(unnamed)", err);
            policy_free(p);
            status = EXIT_USAGE;
            goto done;
        }
        l->p[l->n] = p;
        l->file[l->n++] = path;
    }
    if (!found) {
        fprintf(stderr, "%s: %s: no HostedChangeManagementPolicy document found\n", PROG, path);
        status = EXIT_USAGE;
    }
done:
    json_decref(docs);
    free(data);
    return status;
}

/* Says what could not be read of policy k's exclusion calendars, on
 * stderr. A calendar missing from the files, or unreadable, holds what it
 * covers (as in the cluster); with --check that is an error. Returns -1 to
 * go on, or an exit status. */
static int calendar_problems(const loaded_t *l, int k)
{
    const policy_t *p = l->p[k];
    for (size_t i = 0; i < p->n_calendars; i++) {
        const policy_calendar_t *cal = &p->calendars[i];
        if (cal->state == POLICY_CALENDAR_READ)
            continue;
        fprintf(stderr, "%s: %s: policy %s: %s; the changes it covers are held\n", PROG,
                l->file[k], p->name[0] ? p->name : "(unnamed)", cal->why);
        for (size_t j = 1; j < cal->read.n_problems && j < ICSREAD_MAX_PROBLEMS; j++)
            fprintf(stderr, "%s:   line %d: %s\n", PROG, cal->read.problems[j].line,
                    cal->read.problems[j].message);
    }
    return -1;
}

/* "2d 3h 30m" style elapsed time. */
static void format_duration(sched_time_t secs, char *buf, size_t len)
{
    long long d = secs / 86400, h = secs % 86400 / 3600, m = secs % 3600 / 60, s = secs % 60;
    size_t o = 0;

    buf[0] = '\0';
#define PART(v, unit)                                                              \
    if ((v) > 0 && o < len)                                                        \
        o += (size_t)snprintf(buf + o, len - o, "%s%lld%s", o ? " " : "", (v), unit);
    PART(d, "d")
    PART(h, "h")
    PART(m, "m")
    PART(s, "s")
#undef PART
    if (o == 0)
        snprintf(buf, len, "0s");
}

/* "2026-01-03 00:00 +01:00" in zone tz, or the UTC form if tz fails. */
static void format_local(const char *tz, sched_time_t t, char *buf, size_t len)
{
    int32_t day;
    int sec, off, y, mo, d;

    if (sched_utc_to_local(tz, t, &day, &sec, &off) != 0) {
        sched_format_utc(t, buf, len);
        return;
    }
    sched_civil_from_days(day, &y, &mo, &d);
    snprintf(buf, len, "%04d-%02d-%02d %02d:%02d %c%02d:%02d", y, mo, d, sec / 3600,
             sec % 3600 / 60, off < 0 ? '-' : '+', abs(off) / 3600, abs(off) % 3600 / 60);
}

static void format_time(sched_time_t t, const char *tz, char *buf, size_t len)
{
    if (t == SCHED_NEG_INF)
        snprintf(buf, len, "(always)");
    else if (t == SCHED_POS_INF)
        snprintf(buf, len, "(never)");
    else if (tz != NULL)
        format_local(tz, t, buf, len);
    else
        sched_format_utc(t, buf, len);
}

/* A JSON timestamp string, or null for an unbounded end. */
static void json_time(sched_time_t t, char *buf, size_t len)
{
    char utc[32];

    if (t == SCHED_NEG_INF || t == SCHED_POS_INF) {
        snprintf(buf, len, "null");
        return;
    }
    sched_format_utc(t, utc, sizeof utc);
    snprintf(buf, len, "\"%s\"", utc);
}

static void print_json(const sched_set_t *w)
{
    char a[40], b[40];
    size_t i;

    fputs("{\"windows\":[", stdout);
    for (i = 0; i < w->len; i++) {
        json_time(w->iv[i].start, a, sizeof a);
        json_time(w->iv[i].end, b, sizeof b);
        printf("%s{\"start\":%s,\"end\":%s}", i ? "," : "", a, b);
    }
    fputs("]}\n", stdout);
}

/* The policies' minimums: a single policy's controlPlane and workerNodes;
 * for an intersection (a NodePool's own within its HostedCluster's) the
 * larger workerNodes of them, and no control-plane one. */
static void minimums(const loaded_t *l, sched_time_t *cp, sched_time_t *workers)
{
    *cp = l->n == 1 ? l->p[0]->min_left_cp : 0;
    *workers = 0;
    for (int k = 0; k < l->n; k++)
        if (l->p[k]->min_left_workers > *workers)
            *workers = l->p[k]->min_left_workers;
}

/* One line per minimum time left: the effective start from `from`. */
static int print_min_left(sched_t *s, sched_time_t from, const char *who, sched_time_t min)
{
    sched_interval_t run, win;
    char m[48], a[32], b[32], y[32], x[32];
    int rc;

    if (min <= 0)
        return 0;
    format_duration(min, m, sizeof m);
    if ((rc = sched_min_left_start(s, from, min, SCHED_LOOKAHEAD, &run, &win)) < 0)
        return rc;
    printf("%s (minimum time left %s): ", who, m);
    if (rc == 0) {
        printf("no window within 10 years is that long: no change would start.\n");
        return 0;
    }
    format_time(run.start, NULL, x, sizeof x);
    format_time(run.end == SCHED_POS_INF ? SCHED_POS_INF : run.end - 1, NULL, y, sizeof y);
    if (run.start == from) {
        printf("a change may start now, until %s.\n", y);
        return 0;
    }
    format_time(win.start, NULL, a, sizeof a);
    format_time(win.end, NULL, b, sizeof b);
    printf("the next start is %s (window %s to %s: changes may start until %s).\n", x, a, b, y);
    return 0;
}

static int print_windows(const loaded_t *l, sched_t *s, const sched_set_t *w, sched_time_t from)
{
    const char *tz = l->p[0]->time_zone;
    char ls[48], le[48], us[32], ue[32], dur[48], now[32];
    sched_interval_t iv;
    size_t i;
    int rc, k;

    for (k = 0; k < l->n; k++)
        printf("Policy %s%s%s (%s, %s, time zone %s)\n", l->p[k]->namespace_,
               l->p[k]->namespace_[0] ? "/" : "", l->p[k]->name[0] ? l->p[k]->name : "(unnamed)",
               l->file[k], policy_strategy_name(l->p[k]->strategy), l->p[k]->time_zone);
    if (l->n > 1)
        printf("Windows are the intersection of these %d policies.\n", l->n);
    if (l->change >= 0)
        printf("Windows of a %s: only the exclusions whose scope holds it apply.\n",
               policy_change_name((policy_change_t)l->change));
    sched_format_utc(from, now, sizeof now);
    printf("\n%-3s  %-23s  %-23s  %-20s  %-20s  %s\n", "#", "START (local)", "END (local)",
           "START (UTC)", "END (UTC)", "DURATION");
    for (i = 0; i < w->len; i++) {
        sched_time_t a = w->iv[i].start, b = w->iv[i].end;
        format_time(a, tz, ls, sizeof ls);
        format_time(b, tz, le, sizeof le);
        format_time(a, NULL, us, sizeof us);
        format_time(b, NULL, ue, sizeof ue);
        if (a == SCHED_NEG_INF || b == SCHED_POS_INF)
            snprintf(dur, sizeof dur, "unbounded");
        else
            format_duration(b - a, dur, sizeof dur);
        printf("%-3zu  %-23s  %-23s  %-20s  %-20s  %s\n", i + 1, ls, le, us, ue, dur);
    }
    if (w->len == 0)
        printf("(no permitted window within 10 years)\n");
    printf("Local times are in %s.\n\n", tz);

    if ((rc = sched_containing(s, from, &iv)) < 0)
        return rc;
    if (rc == 1) {
        if (iv.end == SCHED_POS_INF) {
            printf("Now (%s): changes are permitted, indefinitely.\n", now);
        } else {
            format_time(iv.end, NULL, ue, sizeof ue);
            format_duration(iv.end - from, dur, sizeof dur);
            printf("Now (%s): changes are permitted until %s (%s left).\n", now, ue, dur);
        }
        return 0;
    }
    printf("Now (%s): changes are not permitted", now);
    for (k = 0; k < l->n; k++) {
        sched_t *ks = schedule_of(l, k);
        const char *why = ks ? sched_exclusion_at(ks, from, NULL) : NULL;
        if (why != NULL)
            printf(" (excluded%s%.200s)", why[0] ? ": " : "", why);
        sched_unref(ks);
        if (why != NULL)
            break;
    }
    for (i = 0; i < w->len && w->iv[i].start <= from; i++)
        ;
    if (i < w->len) {
        format_time(w->iv[i].start, NULL, us, sizeof us);
        format_duration(w->iv[i].start - from, dur, sizeof dur);
        printf("; the next window opens %s (in %s).\n", us, dur);
    } else if ((rc = sched_next(s, from, &iv)) == 1 && iv.start - from < SCHED_LOOKAHEAD) {
        format_time(iv.start, NULL, us, sizeof us);
        printf("; the next window opens %s.\n", us);
    } else {
        printf("; no window opens within 10 years.\n");
    }
    return rc < 0 ? rc : 0;
}

/* --not-before: the first instant at or after the later of from and
 * not_before that the schedule permits. */
static int print_not_before(sched_t *s, sched_time_t from, sched_time_t not_before)
{
    sched_time_t at = not_before > from ? not_before : from;
    sched_interval_t iv;
    char t[32], a[32], b[32];
    int rc;

    if (not_before <= 0)
        return 0;
    sched_format_utc(not_before, t, sizeof t);
    if ((rc = sched_containing(s, at, &iv)) < 0)
        return rc;
    if (rc == 0) {
        if ((rc = sched_next(s, at, &iv)) < 0)
            return rc;
        if (rc == 0 || iv.start - at >= SCHED_LOOKAHEAD) {
            printf("Not before %s: no window opens within 10 years after it.\n", t);
            return 0;
        }
        at = iv.start;
    }
    format_time(at, NULL, a, sizeof a);
    format_time(iv.end, NULL, b, sizeof b);
    printf("Not before %s: the first start is %s (in the window until %s).\n", t, a, b);
    return 0;
}

/* The table, then the effective starts of the policies' minimums and of
 * --not-before. */
static int print_table(const loaded_t *l, sched_t *s, const sched_set_t *w, const opts_t *o)
{
    sched_time_t cp, workers, from = o->from;
    int rc;

    if ((rc = print_windows(l, s, w, from)) < 0)
        return rc;
    minimums(l, &cp, &workers);
    if ((rc = print_min_left(s, from, "Control plane", cp)) < 0 ||
        (rc = print_min_left(s, from, "Worker nodes", workers)) < 0 ||
        (rc = print_not_before(s, from, o->not_before)) < 0)
        return rc;
    return 0;
}

/* The ICS form: the same windows as the other formats (at most --count,
 * starting within the look-ahead), and the policies' exclusions. */
static int print_ics(const loaded_t *l, sched_t *s, const opts_t *o)
{
    char summary[512], uid[512];
    size_t so = 0, uo = (size_t)snprintf(uid, sizeof uid, "preview");
    ics_t c = {0};
    int k, rc;

    summary[0] = '\0';
    for (k = 0; k < l->n; k++) {
        const policy_t *p = l->p[k];
        if (so < sizeof summary)
            so += (size_t)snprintf(summary + so, sizeof summary - so, "%s%s%s%s",
                                   k ? " and " : "", p->namespace_, p->namespace_[0] ? "/" : "",
                                   p->name[0] ? p->name : "(unnamed)");
        if (uo < sizeof uid)
            uo += (size_t)snprintf(uid + uo, sizeof uid - uo, ".%s.%s", p->namespace_, p->name);
    }
    ics_timeline_t t = {.uid = uid, .summary = summary, .sched = s,
                        .policies = (const policy_t *const *)l->p, .n_policies = (size_t)l->n,
                        .from = o->from, .until = o->from + SCHED_LOOKAHEAD,
                        .max_windows = o->count};
    sched_time_t cp, workers;
    minimums(l, &cp, &workers);
    t.min_left = cp > workers ? cp : workers; /* the stricter, for either system */
    t.held_from = o->not_before;
    t.held_why = "a held change (--not-before)";
    ics_begin(&c, summary);
    if ((rc = ics_timeline(&c, &t, o->from)) == 0 && (rc = ics_end(&c)) == 0)
        fwrite(c.buf, 1, c.len, stdout);
    ics_free(&c);
    return rc;
}

/* Prints what the options ask for. Returns the exit status. */
static int output(const opts_t *o, const loaded_t *l, sched_t *s, sched_set_t *w)
{
    int rc;

    if (o->check) {
        rc = preview_check(o->guard_file, l->p, l->n, s, o->from, o->has_restrictive_until,
                           o->restrictive_until, o->format == FMT_JSON);
        if (rc == EXIT_USAGE || rc == EXIT_RUNTIME)
            return rc;
    } else if (o->format == FMT_ICS) {
        rc = print_ics(l, s, o);
    } else if ((rc = sched_windows(s, o->from, (size_t)o->count, w)) == 0) {
        if (o->format == FMT_JSON)
            print_json(w);
        else
            rc = print_table(l, s, w, o);
    }
    if (rc < 0) {
        fprintf(stderr, "%s: cannot compute the windows (error %d)\n", PROG, rc);
        return EXIT_RUNTIME;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write the output: %s\n", PROG, strerror(errno));
        return EXIT_RUNTIME;
    }
    return o->check ? rc : 0;
}

int preview_main(int argc, char **argv)
{
    sched_set_t w;
    sched_t *s = NULL;
    loaded_t l;
    opts_t o;
    int status, i;

    memset(&l, 0, sizeof l);
    sched_set_init(&w);
    if ((status = parse_args(argc, argv, &o)) >= 0)
        return status;
    if ((l.configmaps = json_array()) == NULL)
        goto oom;
    for (i = 0; i < o.n_files; i++)
        if ((status = load(o.files[i], o.from, &l)) >= 0)
            goto done;
    status = EXIT_RUNTIME;
    for (i = 0; i < l.n; i++) {
        if (policy_read_calendars(l.p[i], file_configmap, &l, o.from, NULL) != 0)
            goto oom;
        if ((status = calendar_problems(&l, i)) >= 0)
            goto done;
    }
    status = EXIT_RUNTIME;
    l.change = o.change;
    if ((s = schedule_of(&l, 0)) == NULL)
        goto oom;
    for (i = 1; i < l.n; i++) {
        sched_t *next = schedule_of(&l, i), *both;
        if (next == NULL)
            goto oom;
        both = sched_and(s, next);
        sched_unref(next);
        sched_unref(s);
        s = both;
        if (s == NULL)
            goto oom;
    }
    status = output(&o, &l, s, &w);
    goto done;
oom:
    fprintf(stderr, "%s: out of memory\n", PROG);
done:
    sched_set_free(&w);
    sched_unref(s);
    for (i = 0; i < l.n; i++)
        policy_free(l.p[i]);
    json_decref(l.configmaps);
    return status;
}
