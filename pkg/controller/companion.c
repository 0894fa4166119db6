/* companion.c: each HostedCluster's and NodePool's companion object
 * (decide/companion.h) brought to its plan through the writer. Nothing is
 * decided here: the content is decide_companion_status()'s, and whether it
 * must be written is a comparison of digests. */
#include "controller/internal.h"

#include <stdlib.h>
#include <string.h>

#include "log/log.h"

/* The status member of a digest's text (new reference), or NULL. */
static json_t *written_status(const char *digest)
{
    json_t *d = digest ? json_loads(digest, 0, NULL) : NULL;
    json_t *st = d ? json_incref(json_object_get(d, "status")) : NULL;
    json_decref(d);
    return st;
}

static void submit(ctl_controller_t *c, record_t *r, ctl_write_verb_t verb, const char *path,
                   json_t *doc)
{
    ctl_write_t w = {.verb = verb, .path = path, .doc = doc, .cache = &c->companions,
                     .what = "companion"};
    if (ctl_write(&c->writer, &r->wt, &w))
        ctl_arm_retry(c, r);
}

/* Creates or replaces the companion o (NULL when there is none) with the
 * content plan p gives at now, unless it already has it. */
static void bring_to(ctl_controller_t *c, record_t *r, const kube_obj *o, const char *cname,
                     const decide_plan_t *p, sched_time_t now)
{
    char path[PATH_MAX_LEN];
    /* The companion as last written: the history and held-since the next
     * status extends, and what it is compared with. */
    char *was = o && o->data ? decide_companion_unpack(o->data) : NULL;
    bool unreadable = o && o->data && !was; /* retried, not written without its history */
    json_t *prev = written_status(was);
    json_t *status = unreadable ? NULL : decide_companion_status(p, prev, now);
    json_t *obj = status ? decide_companion_object(p, r->ns, r->name, status) : NULL;
    char *digest = obj ? decide_companion_digest(obj) : NULL;
    json_decref(prev);
    json_decref(status);
    if (!digest) {
        c->stats.write_errors++;
        ctl_arm_retry(c, r);
        goto done;
    }
    if (was && strcmp(was, digest) == 0)
        goto done; /* already right */
    if (kube_path(path, sizeof(path), CM_GROUP, CM_VERSION, DECIDE_COMPANION_RESOURCE, r->ns,
                  o ? cname : NULL, NULL))
        goto done;
    if (o && json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion",
                                 json_string(o->rv)))
        goto done;
    submit(c, r, o ? CTL_WRITE_UPDATE : CTL_WRITE_CREATE, path, obj);
done:
    free(was);
    free(digest);
    json_decref(obj);
}

void ctl_companion_sync(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                        sched_time_t now)
{
    char cname[DECIDE_COMPANION_NAMELEN], path[PATH_MAX_LEN];
    if (!c->leading ||
        decide_companion_name(r->kind == R_HC ? DECIDE_HC : DECIDE_NP, r->name, cname,
                              sizeof(cname)))
        return;
    const kube_obj *o = kube_cache_get(&c->companions, r->ns, cname);
    bool gone = !p || !p->present;
    if (!gone && (!p->decided || !p->status_doc))
        return; /* nothing known: leave it as it is */
    if (!gone && decide_companion_wanted(p)) {
        bring_to(c, r, o, cname, p, now);
        return;
    }
    if (!o)
        return;
    if (kube_path(path, sizeof(path), CM_GROUP, CM_VERSION, DECIDE_COMPANION_RESOURCE, r->ns,
                  cname, NULL) == 0) {
        log_kv(LOG_INFO, "deleting companion", "namespace", r->ns, "name", cname, NULL);
        submit(c, r, CTL_WRITE_DELETE, path, NULL);
    }
}
