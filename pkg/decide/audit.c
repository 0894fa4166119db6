/* audit.c: the records of who made an override or a held request. */
#include "decide/audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "decide/slim.h"
#include "policy/stanza.h"

static const char *ann(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(hcp_json_path(obj, "metadata.annotations"), key));
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The override part of a stanza: strategy and its two times. */
static bool same_override(const stanza_t *a, const stanza_t *b)
{
    if (a->present != b->present || a->valid != b->valid)
        return false;
    if (!a->present || !a->valid)
        return true;
    return a->strategy == b->strategy && a->has_permissive_until == b->has_permissive_until &&
           (!a->has_permissive_until || a->permissive_until == b->permissive_until) &&
           a->has_restrictive_until == b->has_restrictive_until &&
           (!a->has_restrictive_until || a->restrictive_until == b->restrictive_until);
}

/* Printable ASCII only, cut to the mark's length. */
static void set_value(decide_audit_mark_t *m, const char *v)
{
    size_t n = 0;
    for (; v[n] && n + 1 < sizeof(m->value); n++)
        m->value[n] = v[n] >= 0x20 && v[n] < 0x7f ? v[n] : '?';
    m->value[n] = '\0';
}

static void mark(decide_audit_mark_t *out, size_t *n, const char *key, const char *value)
{
    decide_audit_mark_t *m = &out[(*n)++];
    m->key = key;
    m->remove = value == NULL;
    m->value[0] = '\0';
    if (value)
        set_value(m, value);
}

/* A record the write does not make: put back as it was, if it changed. */
static void keep(const json_t *old_obj, const json_t *new_obj, const char *key,
                 decide_audit_mark_t *out, size_t *n)
{
    const char *was = ann(old_obj, key), *now = ann(new_obj, key);
    if (!same(was, now))
        mark(out, n, key, was); /* was NULL: remove (now is there) */
}

/* Records who, when and why (what, for a withdrawal) in the three keys, or
 * keeps them. */
static void record(const json_t *old_obj, const json_t *new_obj, bool made, const char *user,
                   const char *when, const char *what, const char *const keys[3],
                   decide_audit_mark_t *out, size_t *n)
{
    const char *why = ann(new_obj, DECIDE_REASON_ANNOTATION);
    if (!made) {
        for (int i = 0; i < 3; i++)
            keep(old_obj, new_obj, keys[i], out, n);
        return;
    }
    mark(out, n, keys[0], user[0] ? user : "unknown");
    mark(out, n, keys[1], when);
    if (what)
        mark(out, n, keys[2], what);
    else if (why && !same(why, ann(old_obj, DECIDE_REASON_ANNOTATION)))
        mark(out, n, keys[2], why);
    else if (ann(new_obj, keys[2]))
        mark(out, n, keys[2], NULL);
}

/* Removes the keys the new object carries. */
static void drop(const json_t *new_obj, const char *const keys[3], decide_audit_mark_t *out,
                 size_t *n)
{
    for (int i = 0; i < 3; i++)
        if (ann(new_obj, keys[i]))
            mark(out, n, keys[i], NULL);
}

size_t decide_audit_marks(const json_t *old_obj, const json_t *new_obj, const char *user,
                          const decide_audit_write_t *w, sched_time_t now,
                          decide_audit_mark_t *out)
{
    static const char *const over[3] = {DECIDE_OVERRIDE_BY_ANNOTATION,
                                         DECIDE_OVERRIDE_AT_ANNOTATION,
                                         DECIDE_OVERRIDE_REASON_ANNOTATION};
    static const char *const req[3] = {DECIDE_REQUESTED_BY_ANNOTATION,
                                        DECIDE_REQUESTED_AT_ANNOTATION,
                                        DECIDE_REQUESTED_REASON_ANNOTATION};
    static const char *const wd[3] = {DECIDE_WITHDRAWN_BY_ANNOTATION,
                                       DECIDE_WITHDRAWN_AT_ANNOTATION,
                                       DECIDE_WITHDRAWN_ANNOTATION};
    stanza_t a, b;
    char when[32];
    size_t n = 0;

    stanza_parse(old_obj, &a);
    stanza_parse(new_obj, &b);
    sched_format_utc(now, when, sizeof(when));
    record(old_obj, new_obj, b.present && b.valid && !same_override(&a, &b), user ? user : "",
           when, NULL, over, out, &n);
    /* Withdrawn and nothing left: who asked for it is no longer news. */
    if (!w->held && w->withdrawn && !w->left)
        drop(new_obj, req, out, &n);
    else
        record(old_obj, new_obj, w->held, user ? user : "", when, NULL, req, out, &n);
    record(old_obj, new_obj, w->withdrawn != NULL, user ? user : "", when, w->withdrawn, wd, out,
           &n);
    return n;
}

static int dup(const json_t *obj, const char *key, char **to)
{
    const char *v = ann(obj, key);
    *to = v ? strdup(v) : NULL;
    return v && !*to ? HCP_ENOMEM : 0;
}

int decide_audit_extract(const json_t *obj, decide_audit_t *out)
{
    memset(out, 0, sizeof(*out));
    if (dup(obj, DECIDE_OVERRIDE_BY_ANNOTATION, &out->override_by) ||
        dup(obj, DECIDE_OVERRIDE_AT_ANNOTATION, &out->override_at) ||
        dup(obj, DECIDE_OVERRIDE_REASON_ANNOTATION, &out->override_reason) ||
        dup(obj, DECIDE_OVERRIDE_SKIPPED_ANNOTATION, &out->override_skipped) ||
        dup(obj, DECIDE_REQUESTED_BY_ANNOTATION, &out->requested_by) ||
        dup(obj, DECIDE_REQUESTED_AT_ANNOTATION, &out->requested_at) ||
        dup(obj, DECIDE_REQUESTED_REASON_ANNOTATION, &out->requested_reason) ||
        dup(obj, DECIDE_WITHDRAWN_BY_ANNOTATION, &out->withdrawn_by) ||
        dup(obj, DECIDE_WITHDRAWN_AT_ANNOTATION, &out->withdrawn_at) ||
        dup(obj, DECIDE_WITHDRAWN_ANNOTATION, &out->withdrawn)) {
        decide_audit_free(out);
        return HCP_ENOMEM;
    }
    return 0;
}

void decide_audit_free(decide_audit_t *a)
{
    free(a->override_by);
    free(a->override_at);
    free(a->override_reason);
    free(a->override_skipped);
    free(a->requested_by);
    free(a->requested_at);
    free(a->requested_reason);
    free(a->withdrawn_by);
    free(a->withdrawn_at);
    free(a->withdrawn);
    memset(a, 0, sizeof(*a));
}

/* {by, at, reason?}, or NULL when who or when is missing. */
static json_t *entry(const char *by, const char *at, const char *reason)
{
    if (!by || !at)
        return NULL;
    return json_pack("{s:s, s:s, s:s*}", "by", by, "at", at, "reason",
                     reason && reason[0] ? reason : NULL);
}

void decide_audit_skipped(const char *at, const char *what, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s", at && at[0] ? at : "-", what);
}

/* The override-skipped record's text when it names the override made at
 * at, else NULL. */
static const char *skipped_of(const decide_audit_t *a)
{
    size_t n = a->override_at ? strlen(a->override_at) : 0;
    const char *s = a->override_skipped;
    if (!s || !n || strncmp(s, a->override_at, n) != 0 || s[n] != ' ' || !s[n + 1])
        return NULL;
    return s + n + 1;
}

json_t *decide_audit_doc(const decide_audit_t *a, bool held)
{
    json_t *o = entry(a->override_by, a->override_at, a->override_reason);
    const char *skipped = skipped_of(a);
    if (o && skipped)
        json_object_set_new(o, "skipped", json_string(skipped));
    json_t *r = held ? entry(a->requested_by, a->requested_at, a->requested_reason) : NULL;
    json_t *w = a->withdrawn_by && a->withdrawn_at
                    ? json_pack("{s:s, s:s, s:s}", "by", a->withdrawn_by, "at", a->withdrawn_at,
                                "what", a->withdrawn ? a->withdrawn : "a held request")
                    : NULL;
    if (!o && !r && !w)
        return NULL;
    return json_pack("{s:o*, s:o*, s:o*}", "override", o, "heldRequest", r, "withdrawn", w);
}

bool decide_audit_fresh(uint64_t was, uint64_t hash, const char *at, sched_time_t now,
                        sched_time_t started)
{
    sched_time_t t;
    if (!hash || hash == was)
        return false;
    return was != 0 ||
           (at && sched_parse_rfc3339(at, &t) == 0 && (t >= started || now - t <= 600));
}

bool decide_withdrawn_news(const decide_audit_t *a, sched_t *timeline, sched_time_t now,
                           sched_time_t *until)
{
    sched_time_t at, asked;
    sched_state_t st;

    if (!a->withdrawn_by || !a->withdrawn_at || sched_parse_rfc3339(a->withdrawn_at, &at) != 0 ||
        at > now)
        return false;
    if (a->requested_at && sched_parse_rfc3339(a->requested_at, &asked) == 0 && asked > at)
        return false; /* a newer request replaced it */
    *until = at + DECIDE_WITHDRAWN_NEWS;
    if (timeline && sched_state_at(timeline, at, &st) == 0) {
        sched_time_t end = st.permitted ? st.current.end : st.has_next ? st.next.end : *until;
        if (end < *until)
            *until = end;
    }
    return now < *until;
}
