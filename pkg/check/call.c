/* call.c: asking the pre-start checks on the loop (call.h). */
#include "check/call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"
#include "notify/send.h"

/* An object whose held change the checks are asked about. */
typedef struct check_obj {
    hcp_link_t link;
    hcp_hnode_t node; /* in by_uid */
    char uid[64];
    char *kind, *ns, *name; /* one allocation (kind's) */
    char *body;             /* the pre-start payload */
    check_entry_t e;
} check_obj_t;

/* One POST in flight. */
typedef struct check_call {
    hcp_link_t link;
    check_runner_t *r;
    check_obj_t *o;
    kube_transfer *t;
    size_t check;
} check_call_t;

static void arm(check_runner_t *r);

static bool uid_eq(const hcp_hnode_t *n, const void *key)
{
    return strcmp(hcp_list_entry(n, check_obj_t, node)->uid, key) == 0;
}

/* The link of the object of this uid in by_uid, or where it would go;
 * NULL before the first ask (no table yet). */
static hcp_hnode_t **slot(const check_runner_t *r, const char *uid)
{
    if (!r->by_uid.buckets)
        return NULL;
    return hcp_htab_slot(&r->by_uid, hcp_hash_str(HCP_HASH_SEED, uid), uid_eq, uid);
}

static check_obj_t *find(const check_runner_t *r, const char *uid)
{
    hcp_hnode_t **s = slot(r, uid);
    return s && *s ? hcp_list_entry(*s, check_obj_t, node) : NULL;
}

static void cancel_calls(check_runner_t *r, const check_obj_t *o)
{
    hcp_link_t *n, *tmp;
    HCP_LIST_FOREACH(n, tmp, &r->calls) {
        check_call_t *c = hcp_list_entry(n, check_call_t, link);
        if (o && c->o != o)
            continue;
        kube_http_cancel(r->http, c->t);
        r->inflight[c->check]--;
        hcp_list_remove(&c->link);
        free(c);
    }
}

static void call(check_runner_t *r, check_obj_t *o, size_t i);

/* Starts the calls of check i that wait for room (not asked yet), oldest
 * object first, while there is room. */
static void pump(check_runner_t *r, size_t i)
{
    hcp_link_t *n, *tmp;
    HCP_LIST_FOREACH(n, tmp, &r->objs) {
        if (r->inflight[i] >= CHECK_MAX_INFLIGHT)
            return;
        check_obj_t *o = hcp_list_entry(n, check_obj_t, link);
        if (o->e.a[i].state == CHECK_UNASKED && check_entry_due(&o->e, &r->cfg, i, 0))
            call(r, o, i);
    }
}

static void obj_free(check_runner_t *r, check_obj_t *o)
{
    cancel_calls(r, o);
    hcp_list_remove(&o->link);
    hcp_htab_remove(&r->by_uid, slot(r, o->uid));
    free(o->kind);
    free(o->body);
    free(o);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    check_runner_t *r = w->data;
    double now = ev_now(loop);
    hcp_link_t *n, *tmp;

    (void)revents;
    /* Each object with a refused check due again is decided again: the
     * controller asks once more if its change is still held. */
    HCP_LIST_FOREACH(n, tmp, &r->objs) {
        check_obj_t *o = hcp_list_entry(n, check_obj_t, link);
        for (size_t i = 0; i < r->cfg.n; i++)
            if (o->e.a[i].state == CHECK_REFUSED && o->e.a[i].next_at <= now) {
                if (r->changed)
                    r->changed(o->kind, o->ns, o->name, r->ud);
                break;
            }
    }
    arm(r);
}

/* The timer for the earliest refused check not yet due. */
static void arm(check_runner_t *r)
{
    double now = ev_now(r->loop), next = -1;
    hcp_link_t *n, *tmp;

    ev_timer_stop(r->loop, &r->timer);
    if (!r->leading)
        return;
    HCP_LIST_FOREACH(n, tmp, &r->objs) {
        check_obj_t *o = hcp_list_entry(n, check_obj_t, link);
        for (size_t i = 0; i < r->cfg.n; i++)
            if (o->e.a[i].state == CHECK_REFUSED && o->e.a[i].next_at > now &&
                (next < 0 || o->e.a[i].next_at < next))
                next = o->e.a[i].next_at;
    }
    if (next >= 0) {
        ev_timer_set(&r->timer, next - now > 0.001 ? next - now : 0.001, 0.);
        ev_timer_start(r->loop, &r->timer);
    }
}

void check_runner_init(check_runner_t *r, struct ev_loop *loop, kube_http *http,
                       const check_config_t *cfg, check_changed_fn changed, void *ud)
{
    memset(r, 0, sizeof(*r));
    r->loop = loop;
    r->http = http;
    r->cfg = *cfg;
    r->changed = changed;
    r->ud = ud;
    hcp_list_init(&r->objs);
    hcp_list_init(&r->calls);
    ev_timer_init(&r->timer, on_timer, 0., 0.);
    r->timer.data = r;
}

static void forget_all(check_runner_t *r)
{
    hcp_link_t *n;
    while ((n = hcp_list_first(&r->objs)) != NULL)
        obj_free(r, hcp_list_entry(n, check_obj_t, link));
}

void check_runner_free(check_runner_t *r)
{
    ev_timer_stop(r->loop, &r->timer);
    forget_all(r);
    hcp_htab_free(&r->by_uid);
}

void check_runner_lead(check_runner_t *r, bool leading)
{
    if (!r || r->leading == leading)
        return;
    r->leading = leading;
    if (!leading) {
        ev_timer_stop(r->loop, &r->timer);
        forget_all(r);
    }
}

static void on_done(kube_transfer *t, const kube_transfer_result *res, void *ud)
{
    check_call_t *c = ud;
    check_runner_t *r = c->r;
    check_obj_t *o = c->o;
    const check_def_t *d = &r->cfg.checks[c->check];
    long status = res->code == 0 ? res->http_status : 0;
    char st[16];

    (void)t;
    hcp_list_remove(&c->link);
    r->inflight[c->check]--;
    check_entry_answer(&o->e, &r->cfg, c->check, status, res->body, res->body_len, res->errmsg,
                       ev_now(r->loop));
    const check_answer_t *a = &o->e.a[c->check];
    check_counts_t *k = &r->counts[c->check];
    if (a->state == CHECK_ALLOWED)
        k->allowed++;
    else if (a->state == CHECK_IGNORED)
        k->ignored++;
    else if (status > 0)
        k->refused++;
    else
        k->unanswered++;
    snprintf(st, sizeof(st), "%ld", status);
    log_kv(a->state == CHECK_ALLOWED ? LOG_INFO : LOG_WARN,
           a->state == CHECK_ALLOWED   ? "pre-start check allowed the change"
           : a->state == CHECK_IGNORED ? "pre-start check refused the change; its failurePolicy "
                                         "Ignore lets it go"
                                       : "pre-start check refused the change; it is asked again",
           "check", d->name, "kind", o->kind, "namespace", o->ns, "name", o->name, "status", st,
           "answer", a->msg, NULL);
    size_t i = c->check;
    free(c);
    arm(r);
    if (r->changed)
        r->changed(o->kind, o->ns, o->name, r->ud);
    pump(r, i);
}

/* Starts check i's POST about o; a call that cannot start is a refusal
 * without an answer. */
static void call(check_runner_t *r, check_obj_t *o, size_t i)
{
    const check_def_t *d = &r->cfg.checks[i];
    struct curl_slist *h = NULL;
    check_call_t *c = calloc(1, sizeof(*c));
    CURL *easy = NULL;
    kube_error ke;

    if (!c || notify_post_setup(d->url, "application/cloudevents+json", d->token_file, "check",
                                d->name, o->body, d->timeout, &easy, &h) != 0)
        goto fail;
    c->r = r;
    c->o = o;
    c->check = i;
    o->e.a[i].state = CHECK_ASKING;
    c->t = kube_http_start(r->http, easy, h, false, NULL, on_done, c, &ke);
    if (!c->t) /* easy and h are freed with it */
        goto fail;
    hcp_list_push_back(&r->calls, &c->link);
    r->inflight[i]++;
    return;
fail:
    free(c);
    check_entry_answer(&o->e, &r->cfg, i, 0, NULL, 0, "the call could not start",
                       ev_now(r->loop));
    r->counts[i].unanswered++;
    arm(r);
}

void check_runner_ask(check_runner_t *r, const char *uid, uint64_t change, unsigned system,
                      const notify_event_t *ev)
{
    if (!r || !r->leading || r->cfg.n == 0 || !uid || !ev)
        return;
    check_obj_t *o = find(r, uid);
    if (o && (o->e.change != change || o->e.system != system)) {
        obj_free(r, o);
        o = NULL;
    }
    if (!o) {
        size_t lk = strlen(ev->kind) + 1, ln = strlen(ev->ns) + 1, lm = strlen(ev->name) + 1;
        const char *ct;
        if ((!r->by_uid.buckets && hcp_htab_init(&r->by_uid, 16) != 0) ||
            !(o = calloc(1, sizeof(*o))) || !(o->kind = malloc(lk + ln + lm)) ||
            notify_payload(ev, NOTIFY_CLOUDEVENTS, &o->body, &ct) != 0) {
            if (o)
                free(o->kind);
            free(o);
            log_kv(LOG_WARN, "cannot ask the pre-start checks (out of memory); the change stays "
                   "held", "uid", uid, NULL);
            return;
        }
        snprintf(o->uid, sizeof(o->uid), "%s", uid);
        o->ns = o->kind + lk;
        o->name = o->ns + ln;
        memcpy(o->kind, ev->kind, lk);
        memcpy(o->ns, ev->ns, ln);
        memcpy(o->name, ev->name, lm);
        check_entry_reset(&o->e, change, system);
        hcp_list_push_back(&r->objs, &o->link);
        hcp_htab_insert(&r->by_uid, slot(r, o->uid), &o->node,
                        hcp_hash_str(HCP_HASH_SEED, o->uid));
    }
    double now = ev_now(r->loop);
    for (size_t i = 0; i < r->cfg.n; i++)
        if (r->inflight[i] < CHECK_MAX_INFLIGHT && check_entry_due(&o->e, &r->cfg, i, now))
            call(r, o, i);
}

check_verdict_t check_runner_verdict(const check_runner_t *r, const char *uid, uint64_t change,
                                     unsigned system, char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    if (!r || check_config_lead(&r->cfg, system) < 0)
        return CHECK_NONE;
    const check_obj_t *o = uid ? find(r, uid) : NULL;
    if (!o || o->e.change != change || o->e.system != system) {
        check_entry_t e;
        check_entry_reset(&e, change, system);
        return check_entry_verdict(&e, &r->cfg, why, len);
    }
    return check_entry_verdict(&o->e, &r->cfg, why, len);
}

void check_runner_forget(check_runner_t *r, const char *uid)
{
    check_obj_t *o = r && uid ? find(r, uid) : NULL;
    if (o)
        obj_free(r, o);
}

void check_runner_forget_object(check_runner_t *r, const char *kind, const char *ns,
                                const char *name)
{
    hcp_link_t *n, *tmp;
    if (!r)
        return;
    HCP_LIST_FOREACH(n, tmp, &r->objs) {
        check_obj_t *o = hcp_list_entry(n, check_obj_t, link);
        if (strcmp(o->kind, kind) == 0 && strcmp(o->ns, ns) == 0 && strcmp(o->name, name) == 0)
            obj_free(r, o);
    }
}
