/* cv.c: the hosted ClusterVersion's conditions, in sentences. */
#include "hosted/cv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESERVE 96 /* room kept for the "N more NodePools" sentence */

/* A message text being built: what does not fit is counted, not cut. */
typedef struct text {
    char *buf;
    size_t len, cap;
    size_t left_out; /* NodePools that did not fit */
} text_t;

/* Appends "<who>: <sentence>" (the sentence's first word in lower case when
 * it is an ordinary word: "Changes are ..." reads "changes are ...") when
 * it fits before the reserve; false when it does not. */
static bool add(text_t *t, const char *who, const char *sentence, size_t reserve)
{
    char first[2] = {sentence[0], '\0'};
    if (first[0] >= 'A' && first[0] <= 'Z' && sentence[1] >= 'a' && sentence[1] <= 'z')
        first[0] = (char)(first[0] - 'A' + 'a');
    int n = snprintf(t->buf + t->len, t->cap - t->len, "%s%s: %s%s", t->len ? " " : "", who,
                     first, sentence[0] ? sentence + 1 : "");
    if (n < 0 || (size_t)n + reserve >= t->cap - t->len) {
        t->buf[t->len] = '\0';
        return false;
    }
    t->len += (size_t)n;
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const hosted_cv_pool_t *)a)->name, ((const hosted_cv_pool_t *)b)->name);
}

/* One condition's message: the control plane's sentence, then each pool's
 * (cond selects which of the pool's conditions). */
static void message(char *buf, size_t cap, const char *cp_sentence, const hosted_cv_pool_t *pools,
                    size_t n, bool pending)
{
    text_t t = {buf, 0, cap, 0};
    char who[300];
    buf[0] = '\0';
    add(&t, "Control plane", cp_sentence, RESERVE);
    for (size_t i = 0; i < n; i++) {
        const decide_seen_cond_t *c = pending ? pools[i].pending : pools[i].paused;
        snprintf(who, sizeof(who), "NodePool %s", pools[i].name);
        if (t.left_out || !add(&t, who, c && c->present && c->message ? c->message
                                                                      : "Not decided yet.",
                               RESERVE))
            t.left_out++;
    }
    if (t.left_out)
        snprintf(buf + t.len, cap - t.len, "%s%zu more NodePool%s not listed.", t.len ? " " : "",
                 t.left_out, t.left_out == 1 ? " is" : "s are");
}

void hosted_cv_conditions(const decide_decision_t *cp, hosted_cv_pool_t *pools, size_t n,
                          hosted_cv_t *out)
{
    if (n > 1)
        qsort(pools, n, sizeof(*pools), by_name);
    out->paused_status = cp->paused_status;
    out->paused_reason = cp->paused_reason;
    out->pending_status = cp->pending_status;
    out->pending_reason = cp->pending_reason;
    for (size_t i = 0; i < n && !out->pending_status; i++) {
        const decide_seen_cond_t *c = pools[i].pending;
        if (c && c->present && c->status) {
            out->pending_status = true;
            out->pending_reason = c->reason ? c->reason : "ChangesPending";
        }
    }
    message(out->paused_message, sizeof(out->paused_message), cp->paused_message, pools, n,
            false);
    message(out->pending_message, sizeof(out->pending_message), cp->pending_message, pools, n,
            true);
}

hosted_conds_t hosted_want(const decide_decision_t *d, hosted_cv_pool_t *pools, size_t n,
                           hosted_cv_t *cv)
{
    hosted_cv_conditions(d, pools, n, cv);
    return (hosted_conds_t){{cv->paused_status, cv->paused_reason, cv->paused_message},
                            {cv->pending_status, cv->pending_reason, cv->pending_message}};
}
