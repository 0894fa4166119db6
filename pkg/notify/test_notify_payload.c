/* test_notify_payload.c: CloudEvents and Slack bodies, and their ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/json.h"
#include "notify/payload.h"

static sched_time_t T(const char *s)
{
    sched_time_t t;
    assert_int_equal(sched_parse_rfc3339(s, &t), 0);
    return t;
}

static notify_event_t held(void)
{
    return (notify_event_t){.step = NOTIFY_HELD, .kind = "HostedCluster", .ns = "clusters",
                            .name = "prod", .uid = "u-1", .window = T("2026-03-07T00:00:00Z"),
                            .at = T("2026-03-06T10:00:00Z"), .change = "release 4.17.1",
                            .until = T("2026-03-07T00:00:00Z"), .request = SCHED_NEG_INF,
                            .detail = "requested by ocm"};
}

static void test_cloudevent(void **state)
{
    (void)state;
    notify_event_t ev = held();
    char *body;
    const char *ct;
    assert_int_equal(notify_payload(&ev, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    assert_string_equal(ct, "application/cloudevents+json");
    json_t *d = json_loads(body, 0, NULL);
    assert_non_null(d);
    assert_string_equal(json_string_value(json_object_get(d, "specversion")), "1.0");
    assert_string_equal(json_string_value(json_object_get(d, "type")),
                        "io.openshift.hypershift.changemanagement.held.v1");
    assert_string_equal(json_string_value(json_object_get(d, "subject")),
                        "hostedclusters/clusters/prod");
    assert_string_equal(json_string_value(json_object_get(d, "source")),
                        "/hcp-controller/namespaces/clusters");
    assert_string_equal(json_string_value(json_object_get(d, "time")), "2026-03-06T10:00:00Z");
    assert_int_equal(strlen(json_string_value(json_object_get(d, "id"))), 32);
    json_t *data = json_object_get(d, "data");
    assert_string_equal(json_string_value(json_object_get(data, "message")),
                        "release 4.17.1 is held until 2026-03-07T00:00:00Z.");
    assert_string_equal(json_string_value(json_object_get(data, "until")), "2026-03-07T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(data, "detail")), "requested by ocm");
    json_decref(d);
    free(body);
}

static void test_slack(void **state)
{
    (void)state;
    notify_event_t ev = held();
    char *body;
    const char *ct;
    ev.step = NOTIFY_WINDOW_SOON;
    ev.lead = 48 * 3600;
    ev.detail = NULL;
    assert_int_equal(notify_payload(&ev, NOTIFY_SLACK, &body, &ct), 0);
    assert_string_equal(ct, "application/json");
    assert_string_equal(body, "{\"text\":\"[hcp-controller] HostedCluster clusters/prod: a window "
                              "opens at 2026-03-07T00:00:00Z (in 48h00m) with release 4.17.1 "
                              "pending.\"}");
    free(body);
}

/* The id depends on the object, the step, the window and (window-soon) the
 * lead, and on nothing else: sent again after a restart it is the same. */
static void test_ids(void **state)
{
    (void)state;
    notify_event_t a = held(), b = held();
    char ia[40], ib[40];
    b.at += 3600;
    b.detail = "another sentence";
    notify_event_id(&a, ia, sizeof(ia));
    notify_event_id(&b, ib, sizeof(ib));
    assert_string_equal(ia, ib);
    b.window += 7 * 86400;
    notify_event_id(&b, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
    b = held();
    b.step = NOTIFY_INITIATED;
    notify_event_id(&b, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
    b = held();
    b.uid = "u-2";
    notify_event_id(&b, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
    a.step = b.step = NOTIFY_WINDOW_SOON;
    b.uid = a.uid;
    a.lead = 3600;
    b.lead = 48 * 3600;
    notify_event_id(&a, ia, sizeof(ia));
    notify_event_id(&b, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
}

/* Held, window-soon and initiated carry the request: a second request held
 * for the same window is another notification (another id), the same
 * request sent again the same one; the body names the request's time and,
 * for an initiated step, the notice the window's opening superseded. */
static void test_request_in_id_and_body(void **state)
{
    (void)state;
    notify_event_t a = held(), b = held();
    char ia[40], ib[40], *body;
    const char *ct;
    a.request = b.request = T("2026-03-04T09:12:00Z");
    notify_event_id(&a, ia, sizeof(ia));
    notify_event_id(&b, ib, sizeof(ib));
    assert_string_equal(ia, ib);
    b.request = T("2026-03-05T11:00:00Z");
    notify_event_id(&b, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
    b.request = SCHED_NEG_INF;
    notify_event_id(&b, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
    a.step = NOTIFY_INITIATED;
    a.superseded = 3600;
    assert_int_equal(notify_payload(&a, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    json_t *d = json_loads(body, 0, NULL);
    json_t *data = json_object_get(d, "data");
    assert_string_equal(json_string_value(json_object_get(data, "requestedAt")),
                        "2026-03-04T09:12:00Z");
    assert_string_equal(json_string_value(json_object_get(data, "supersedes")),
                        "window-soon 1h00m");
    assert_string_equal(json_string_value(json_object_get(data, "message")),
                        "release 4.17.1 is let through: the window is open (it opened before "
                        "the 1h00m notice was sent).");
    json_decref(d);
    free(body);
    /* No held step was told for the request either: it supersedes held. */
    a.superseded_held = true;
    assert_int_equal(notify_payload(&a, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    d = json_loads(body, 0, NULL);
    data = json_object_get(d, "data");
    assert_string_equal(json_string_value(json_object_get(data, "supersedes")), "held");
    assert_string_equal(json_string_value(json_object_get(data, "message")),
                        "release 4.17.1 is let through: the window is open (it opened before "
                        "the held notice was sent).");
    json_decref(d);
    free(body);
}

/* The withdrawn step: its CloudEvents type, the sentence naming what was
 * withdrawn, who in the detail, keyed by the withdrawal's time (two
 * withdrawals are two notifications); the Slack form says the same. */
static void test_withdrawn(void **state)
{
    (void)state;
    notify_event_t ev = held(), other;
    char *body, ia[40], ib[40];
    const char *ct;
    ev.step = NOTIFY_WITHDRAWN;
    ev.window = T("2026-03-04T09:00:00Z");
    ev.until = SCHED_POS_INF;
    ev.detail = "Withdrawn by flux at 2026-03-04T09:00:00Z.";
    assert_int_equal(notify_payload(&ev, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    json_t *d = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(d, "type")),
                        "io.openshift.hypershift.changemanagement.withdrawn.v1");
    json_t *data = json_object_get(d, "data");
    assert_string_equal(json_string_value(json_object_get(data, "step")), "withdrawn");
    assert_string_equal(json_string_value(json_object_get(data, "message")),
                        "the request for release 4.17.1 is withdrawn: nothing of it starts at "
                        "the window.");
    assert_string_equal(json_string_value(json_object_get(data, "window")),
                        "2026-03-04T09:00:00Z");
    assert_true(json_is_null(json_object_get(data, "until")));
    json_decref(d);
    free(body);
    assert_int_equal(notify_payload(&ev, NOTIFY_SLACK, &body, &ct), 0);
    assert_string_equal(body, "{\"text\":\"[hcp-controller] HostedCluster clusters/prod: the "
                              "request for release 4.17.1 is withdrawn: nothing of it starts at "
                              "the window. Withdrawn by flux at 2026-03-04T09:00:00Z.\"}");
    free(body);
    other = ev;
    other.window = T("2026-03-05T09:00:00Z");
    notify_event_id(&ev, ia, sizeof(ia));
    notify_event_id(&other, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
    assert_string_equal(notify_step_name(NOTIFY_WITHDRAWN), "withdrawn");
}

/* The health after a change: unhealthy-after-change, and post-change with
 * its verdict in data (absent from every other step). */
static void test_after_change(void **state)
{
    (void)state;
    notify_event_t ev = held();
    char *body;
    const char *ct;
    ev.step = NOTIFY_UNHEALTHY_AFTER_CHANGE;
    ev.change = "release 4.17.2";
    assert_int_equal(notify_payload(&ev, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    json_t *d = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(d, "type")),
                        "io.openshift.hypershift.changemanagement.unhealthy-after-change.v1");
    assert_string_equal(json_string_value(hcp_json_path(d, "data.message")),
                        "release 4.17.2 completed, and the cluster is unhealthy after it.");
    assert_null(hcp_json_path(d, "data.verdict"));
    json_decref(d);
    free(body);
    ev.step = NOTIFY_POST_CHANGE;
    ev.verdict = "Healthy";
    assert_int_equal(notify_payload(&ev, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    d = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(hcp_json_path(d, "data.step")), "post-change");
    assert_string_equal(json_string_value(hcp_json_path(d, "data.verdict")), "Healthy");
    assert_string_equal(json_string_value(hcp_json_path(d, "data.message")),
                        "release 4.17.2 completed; the cluster is healthy after it.");
    json_decref(d);
    free(body);
    ev.verdict = "Unhealthy";
    ev.kind = "NodePool";
    assert_int_equal(notify_payload(&ev, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    d = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(hcp_json_path(d, "data.message")),
                        "release 4.17.2 completed; the node pool is unhealthy after it.");
    json_decref(d);
    free(body);
}

/* hold-aging: its type, the age and the request in words, requestedAt in
 * data; a week later another id; no window: said so. */
static void test_hold_aging(void **state)
{
    (void)state;
    notify_event_t ev = held();
    char *body, ia[40], ib[40];
    const char *ct;
    ev.step = NOTIFY_HOLD_AGING;
    ev.request = T("2026-02-01T09:00:00Z");
    ev.window = T("2026-03-03T09:00:00Z");
    ev.at = T("2026-03-03T15:00:00Z");
    assert_int_equal(notify_payload(&ev, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    json_t *d = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(d, "type")),
                        "io.openshift.hypershift.changemanagement.hold-aging.v1");
    assert_string_equal(json_string_value(hcp_json_path(d, "data.message")),
                        "release 4.17.1 has been held for 30d 6h (since 2026-02-01T09:00:00Z): "
                        "it waits for the window at 2026-03-07T00:00:00Z.");
    assert_string_equal(json_string_value(hcp_json_path(d, "data.requestedAt")),
                        "2026-02-01T09:00:00Z");
    json_decref(d);
    free(body);
    ev.until = SCHED_POS_INF;
    assert_int_equal(notify_payload(&ev, NOTIFY_SLACK, &body, &ct), 0);
    assert_non_null(strstr(body, "(since 2026-02-01T09:00:00Z): no window lets it through yet."));
    free(body);
    notify_event_t later = ev;
    later.window = T("2026-03-10T09:00:00Z");
    notify_event_id(&ev, ia, sizeof(ia));
    notify_event_id(&later, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
    assert_string_equal(notify_step_name(NOTIFY_HOLD_AGING), "hold-aging");
}

/* The release waves' steps: their types and sentences; the halt's and
 * its end's ids differ (same window, another step). */
static void test_wave_steps(void **state)
{
    (void)state;
    notify_event_t ev = held();
    char *body, ia[40], ib[40];
    const char *ct;
    ev.step = NOTIFY_SOAK_WAITING;
    ev.until = T("2026-03-06T08:00:00Z");
    ev.detail = "Release waves: wave early waits for wave canary to soak.";
    assert_int_equal(notify_payload(&ev, NOTIFY_CLOUDEVENTS, &body, &ct), 0);
    json_t *d = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(d, "type")),
                        "io.openshift.hypershift.changemanagement.soak-waiting.v1");
    assert_string_equal(json_string_value(hcp_json_path(d, "data.message")),
                        "release 4.17.1 waits for the release waves before it to soak: it may "
                        "start from 2026-03-06T08:00:00Z.");
    assert_string_equal(json_string_value(hcp_json_path(d, "data.detail")), ev.detail);
    json_decref(d);
    free(body);
    ev.until = SCHED_POS_INF;
    assert_int_equal(notify_payload(&ev, NOTIFY_SLACK, &body, &ct), 0);
    assert_non_null(strstr(body, "to soak: no instant is known yet."));
    free(body);
    ev.step = NOTIFY_WAVE_HALTED;
    assert_int_equal(notify_payload(&ev, NOTIFY_SLACK, &body, &ct), 0);
    assert_non_null(strstr(body, "release 4.17.1 is halted: a cluster of an earlier wave runs it "
                                 "unhealthy."));
    free(body);
    notify_event_t resumed = ev;
    resumed.step = NOTIFY_WAVE_RESUMED;
    assert_int_equal(notify_payload(&resumed, NOTIFY_SLACK, &body, &ct), 0);
    assert_non_null(strstr(body, "release 4.17.1 is no longer halted by an earlier wave."));
    free(body);
    notify_event_id(&ev, ia, sizeof(ia));
    notify_event_id(&resumed, ib, sizeof(ib));
    assert_string_not_equal(ia, ib);
    assert_string_equal(notify_step_name(NOTIFY_SOAK_WAITING), "soak-waiting");
    assert_string_equal(notify_step_name(NOTIFY_WAVE_HALTED), "wave-halted");
    assert_string_equal(notify_step_name(NOTIFY_WAVE_RESUMED), "wave-resumed");
    assert_string_equal(notify_step_name(NOTIFY_STEP_COUNT), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cloudevent),
        cmocka_unit_test(test_wave_steps),
        cmocka_unit_test(test_after_change),
        cmocka_unit_test(test_slack),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_request_in_id_and_body),
        cmocka_unit_test(test_withdrawn),
        cmocka_unit_test(test_hold_aging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
