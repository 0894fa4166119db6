/* state.c: the checks' answers about one change (check.h). Pure. */
#include "check/check.h"

#include <stdio.h>
#include <string.h>

#include "base/htab.h"

uint64_t check_change_key(const char *change, sched_time_t window)
{
    /* The words, then the window's eight bytes (little end first, so the
     * key is the same on every machine). */
    unsigned char w[8];
    for (int i = 0; i < 8; i++)
        w[i] = (unsigned char)(((uint64_t)window >> (8 * i)) & 0xff);
    uint64_t h = hcp_hash_bytes(hcp_hash_str(HCP_HASH_SEED, change ? change : ""), w, sizeof(w));
    return h ? h : 1;
}

void check_entry_reset(check_entry_t *e, uint64_t change, unsigned system)
{
    memset(e, 0, sizeof(*e));
    e->change = change;
    e->system = system;
}

static bool applies(const check_entry_t *e, const check_config_t *cfg, size_t i)
{
    return i < cfg->n && (cfg->checks[i].systems & e->system) != 0 &&
           (cfg->checks[i].steps & CHECK_PRE_START) != 0;
}

double check_backoff(unsigned n)
{
    double w = CHECK_BACKOFF_FIRST;
    while (n-- > 1 && w < CHECK_BACKOFF_MAX)
        w *= 2;
    return w < CHECK_BACKOFF_MAX ? w : CHECK_BACKOFF_MAX;
}

bool check_entry_due(const check_entry_t *e, const check_config_t *cfg, size_t i, double now)
{
    if (!applies(e, cfg, i))
        return false;
    const check_answer_t *a = &e->a[i];
    return a->state == CHECK_UNASKED || (a->state == CHECK_REFUSED && now >= a->next_at);
}

/* The first line of untrusted bytes, printable ASCII only (others become
 * '?'), trimmed, at most len-1 bytes. A JSON body {"message": "..."} gives
 * its message. */
static void first_line(const char *body, size_t n, char *out, size_t len)
{
    size_t o = 0, i = 0;
    json_t *doc = NULL;

    out[0] = '\0';
    if (!body || n == 0 || len == 0)
        return;
    if (body[0] == '{' && (doc = json_loadb(body, n, 0, NULL)) != NULL) {
        const json_t *m = json_object_get(doc, "message");
        if (json_is_string(m)) {
            body = json_string_value(m);
            n = json_string_length(m);
        }
    }
    while (i < n && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
        i++;
    for (; i < n && body[i] != '\n' && body[i] != '\r' && o + 1 < len; i++) {
        unsigned char ch = (unsigned char)body[i];
        out[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
    json_decref(doc);
}

void check_entry_answer(check_entry_t *e, const check_config_t *cfg, size_t i, long status,
                        const char *body, size_t len, const char *errmsg, double now)
{
    char line[CHECK_MSGLEN];
    if (!applies(e, cfg, i))
        return;
    check_answer_t *a = &e->a[i];
    first_line(body, len, line, sizeof(line));
    a->status = status;
    if (status >= 200 && status < 300) {
        a->state = CHECK_ALLOWED;
        a->attempts = 0;
        snprintf(a->msg, sizeof(a->msg), "%s", line);
        return;
    }
    if (status > 0)
        snprintf(a->msg, sizeof(a->msg), "HTTP %ld%s%s", status, line[0] ? ": " : "", line);
    else
        snprintf(a->msg, sizeof(a->msg), "no answer (%s)", errmsg && errmsg[0] ? errmsg : "error");
    a->attempts++;
    a->next_at = now + check_backoff(a->attempts);
    a->state = cfg->checks[i].ignore ? CHECK_IGNORED : CHECK_REFUSED;
}

check_verdict_t check_entry_verdict(const check_entry_t *e, const check_config_t *cfg,
                                    char *why, size_t len)
{
    bool any = false, wait = false;
    size_t n = 0;
    char tmp[8];

    if (!why) {
        why = tmp;
        len = sizeof(tmp);
    }
    why[0] = '\0';
    for (size_t i = 0; i < cfg->n; i++) {
        if (!applies(e, cfg, i))
            continue;
        any = true;
        const check_answer_t *a = &e->a[i];
        /* A refused check asked again stays refused until its new answer:
         * the verdict, the conditions and the Events do not flap to
         * "waiting" while the question is in flight. */
        if (a->state == CHECK_REFUSED || (a->state == CHECK_ASKING && a->attempts > 0)) {
            snprintf(why, len, "check %s refused it: %s", cfg->checks[i].name, a->msg);
            return CHECK_FAIL;
        }
        if (a->state == CHECK_UNASKED || a->state == CHECK_ASKING)
            wait = true;
    }
    if (!any)
        return CHECK_NONE;
    if (wait) {
        for (size_t i = 0; i < cfg->n; i++)
            if (applies(e, cfg, i) &&
                (e->a[i].state == CHECK_UNASKED || e->a[i].state == CHECK_ASKING)) {
                size_t l = strlen(why);
                snprintf(why + l, len - l, "%s%s", n++ ? ", " : "waiting for the answer of check ",
                         cfg->checks[i].name);
            }
        return CHECK_WAIT;
    }
    for (size_t i = 0; i < cfg->n; i++)
        if (applies(e, cfg, i) && e->a[i].msg[0]) {
            size_t l = strlen(why);
            snprintf(why + l, len - l, "%s%s %s: %s", n++ ? "; " : "", cfg->checks[i].name,
                     e->a[i].state == CHECK_IGNORED ? "(ignored)" : "says", e->a[i].msg);
        }
    return CHECK_PASS;
}
