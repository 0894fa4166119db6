/* recorded: what the controller last recorded of a HostedCluster or
 * NodePool, for `hcp-controller explain`: its HostedChangeManagementStatus
 * (the companion, pkg/decide/companion.h), read beside the explanation so
 * that a person sees whether the running controller agrees with it (a
 * controller that is down, not leading or behind has recorded something
 * else, or nothing). */
#ifndef HCP_RECORDED_H
#define HCP_RECORDED_H

#include <jansson.h>

#include "kube/client.h"
#include "schedule/schedule.h"

/* What reading the companion gave. */
typedef struct recorded {
    char name[254];     /* the companion's name; "" when the target's name is too long */
    json_t *obj;        /* owned; NULL when not read */
    int http_status;    /* 0 read, 404 none, other: the failed GET's status */
    char error[256];    /* why it could not be read (not 404) */
} recorded_t;

/* GETs path; returns the object (new) or NULL with *err filled. */
typedef json_t *(*recorded_get_fn)(void *ctx, const char *path, kube_error *err);

/* Reads the record of NodePool (nodepool) or HostedCluster ns/name into r
 * (zeroed by the caller); a missing or unreadable record is explained, not
 * an error. Free r->obj with json_decref(). */
void recorded_read(recorded_t *r, int nodepool, const char *ns, const char *name,
                   recorded_get_fn get, void *ctx);

/* Prints the "Recorded:" lines of the text output. permitted is the
 * explanation's answer at instant `at`; when the record's current state
 * covers `at` and says otherwise, a "Differs:" line says so. */
void recorded_text(const recorded_t *r, int permitted, sched_time_t at);

/* Whether the record's current state covers `at` and disagrees with
 * permitted (the controller has not acted on the explanation's answer). */
int recorded_differs(const recorded_t *r, int permitted, sched_time_t at);

/* The "recorded" member of the JSON output: {name, found, status,
 * differs} with the companion's status, or {name, found: false, error}.
 * New reference. */
json_t *recorded_json(const recorded_t *r, int permitted, sched_time_t at);

#endif
