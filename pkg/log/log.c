/* log.c: structured log lines. */
#include "log/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static bool log_json;
static int log_verbosity;

void log_setup(bool json, int verbosity)
{
    log_json = json;
    log_verbosity = verbosity;
}

bool log_enabled(int level)
{
    return level <= log_verbosity;
}

/* Writes s as a JSON string body (without quotes). */
static void json_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

static const char *level_name(int level)
{
    switch (level) {
    case LOG_ERROR:
        return "error";
    case LOG_WARN:
        return "warning";
    case LOG_INFO:
        return "info";
    default:
        return "debug";
    }
}

void log_kv(int level, const char *msg, ...)
{
    if (!log_enabled(level))
        return;
    char ts[40];
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", now.tv_nsec / 1000000);

    FILE *f = stderr;
    va_list ap;
    va_start(ap, msg);
    flockfile(f);
    if (log_json) {
        fprintf(f, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"", ts, level_name(level));
        json_escape(f, msg);
        fputc('"', f);
        for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
            const char *v = va_arg(ap, const char *);
            fputs(",\"", f);
            json_escape(f, k);
            fputs("\":\"", f);
            json_escape(f, v);
            fputc('"', f);
        }
        fputs("}\n", f);
    } else {
        fprintf(f, "%s %-7s %s", ts, level_name(level), msg);
        for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
            const char *v = va_arg(ap, const char *);
            bool quote = !v || !*v || strpbrk(v, " \"=");
            fprintf(f, quote ? " %s=\"" : " %s=", k);
            if (quote)
                json_escape(f, v);
            else
                fputs(v, f);
            if (quote)
                fputc('"', f);
        }
        fputc('\n', f);
    }
    funlockfile(f);
    va_end(ap);
}

bool log_once_first(log_once_t *set, const char *key)
{
    unsigned long long h = 14695981039346656037ULL; /* FNV-1a */
    const unsigned char *p;
    unsigned i;

    for (p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    if (h == 0)
        h = 1;
    for (i = 0; i < set->n; i++)
        if (set->seen[i] == h)
            return false;
    if (set->n == LOG_ONCE_SLOTS)
        return false;
    set->seen[set->n++] = h;
    return true;
}
