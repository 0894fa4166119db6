/* test_notify_due.c: the steps an object's state calls for, and the marks
 * of what was delivered (the notified annotation). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "notify/due.h"

static sched_time_t T(const char *s)
{
    sched_time_t t;
    assert_int_equal(sched_parse_rfc3339(s, &t), 0);
    return t;
}

static notify_config_t cfg(void)
{
    notify_config_t c;
    notify_config_default(&c); /* leads 48h, 1h */
    return c;
}

/* A change held on Thursday for Saturday's window. */
static notify_obs_t held_obs(const char *now)
{
    return (notify_obs_t){.now = T(now), .held = true, .restricted = true,
                          .current = T("2026-03-01T00:10:00Z"), .has_next = true,
                          .next = T("2026-03-07T00:00:00Z"), .request = SCHED_NEG_INF,
                          .outcome_at = SCHED_NEG_INF,
                          .override_at = SCHED_NEG_INF, .override_end = SCHED_POS_INF,
                          .withdrawn_at = SCHED_NEG_INF};
}

/* Delivers every due step into m; returns how many were due. */
static size_t deliver(const notify_obs_t *o, notify_marks_t *m)
{
    notify_config_t c = cfg();
    notify_due_t d[NOTIFY_DUE_MAX];
    size_t n = notify_due(o, &c, m, d);
    for (size_t i = 0; i < n; i++)
        notify_marks_note(m, &d[i], &c);
    return n;
}

static void test_held_then_leads(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m;
    notify_due_t d[NOTIFY_DUE_MAX];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-04T12:00:00Z");
    /* 2.5 days ahead: held only. */
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_HELD);
    assert_true(d[0].window == T("2026-03-07T00:00:00Z"));
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* The 48h lead is reached at Thursday 00:00: the wake says so. */
    assert_true(notify_due_wake(&o, &c) == T("2026-03-05T00:00:00Z"));
    o.now = T("2026-03-05T00:00:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_WINDOW_SOON);
    assert_true(d[0].lead == 48 * 3600);
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    assert_true(notify_due_wake(&o, &c) == T("2026-03-06T23:00:00Z"));
    o.now = T("2026-03-06T23:30:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_true(d[0].lead == 3600);
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
}

/* Held 30 minutes before the window: "within 1h" only, once. */
static void test_late_hold_shortest_lead(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m;
    notify_due_t d[NOTIFY_DUE_MAX];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-06T23:30:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 2);
    assert_int_equal(d[1].step, NOTIFY_WINDOW_SOON);
    assert_true(d[1].lead == 3600);
    notify_marks_note(&m, &d[0], &c);
    notify_marks_note(&m, &d[1], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
}

/* Held, let through, completed: each once; the marks survive a round trip
 * through the annotation (a restart), so nothing is due again. */
static void test_lifecycle_restart(void **state)
{
    (void)state;
    notify_marks_t m, back;
    char text[NOTIFY_MARKS_LEN];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-06T23:30:00Z");
    assert_int_equal(deliver(&o, &m), 2);
    /* The window opens; the release is let through and under way. */
    o = (notify_obs_t){.now = T("2026-03-07T00:00:05Z"), .let_through = true,
                       .current = T("2026-03-07T00:00:00Z"), .request = SCHED_NEG_INF,
                       .outcome_at = SCHED_NEG_INF,
                       .override_at = SCHED_NEG_INF, .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF};
    notify_config_t c = cfg();
    notify_due_t d[NOTIFY_DUE_MAX];
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_INITIATED);
    notify_marks_note(&m, &d[0], &c);
    /* Completed two hours later (not fresh to a restarted controller, but
     * after the window it let through). */
    o.let_through = false;
    o.outcome = NOTIFY_OUTCOME_COMPLETED;
    o.outcome_at = T("2026-03-07T00:20:00Z");
    o.now = T("2026-03-07T02:00:00Z");
    notify_marks_format(&m, text, sizeof(text));
    notify_marks_parse(text, &back);
    assert_int_equal(notify_due(&o, &c, &back, d), 1);
    assert_int_equal(d[0].step, NOTIFY_COMPLETED);
    notify_marks_note(&back, &d[0], &c);
    notify_marks_format(&back, text, sizeof(text));
    assert_string_equal(text, "held=2026-03-07T00:00:00Z window-soon-48h=2026-03-07T00:00:00Z "
                              "window-soon-1h=2026-03-07T00:00:00Z "
                              "initiated=2026-03-07T00:00:00Z completed=2026-03-07T00:20:00Z");
    notify_marks_parse(text, &m);
    assert_true(notify_marks_cover(&m, &back) && notify_marks_cover(&back, &m));
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* A restart before the initiated mark was written: initiated is due
     * again (not dropped), completed too. */
    notify_marks_parse("held=2026-03-07T00:00:00Z", &m);
    o.let_through = true;
    assert_int_equal(notify_due(&o, &c, &m, d), 2); /* completed: after the held window */
    assert_int_equal(d[0].step, NOTIFY_INITIATED);
    assert_int_equal(d[1].step, NOTIFY_COMPLETED);
}

/* A second request held for the same window (a NodePool asked again while
 * its first change still waits): held, window-soon and initiated are told
 * once for it too, and a restart (the marks read back from the annotation)
 * tells nothing of either request again. */
static void test_second_request_same_window(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m, back;
    notify_due_t d[NOTIFY_DUE_MAX];
    char text[NOTIFY_MARKS_LEN];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-06T22:00:00Z");
    o.request = T("2026-03-06T21:59:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 2); /* held, window-soon 48h */
    assert_true(d[0].request == o.request && d[1].request == o.request);
    notify_marks_note(&m, &d[0], &c);
    notify_marks_note(&m, &d[1], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* The second request, recorded half an hour later, same window. */
    o.now = T("2026-03-06T22:30:00Z");
    o.request = T("2026-03-06T22:29:30Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 2);
    assert_int_equal(d[0].step, NOTIFY_HELD);
    assert_int_equal(d[1].step, NOTIFY_WINDOW_SOON);
    assert_true(d[0].window == T("2026-03-07T00:00:00Z") && d[0].request == o.request);
    notify_marks_note(&m, &d[0], &c);
    notify_marks_note(&m, &d[1], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* A restart: nothing again. */
    notify_marks_format(&m, text, sizeof(text));
    assert_string_equal(text, "held=2026-03-07T00:00:00Z@2026-03-06T22:29:30Z "
                              "window-soon-48h=2026-03-07T00:00:00Z@2026-03-06T22:29:30Z");
    notify_marks_parse(text, &back);
    assert_true(notify_marks_cover(&back, &m) && notify_marks_cover(&m, &back));
    assert_int_equal(notify_due(&o, &c, &back, d), 0);
    /* The 1h lead: once, for the second request. */
    o.now = T("2026-03-06T23:00:00Z");
    assert_int_equal(notify_due(&o, &c, &back, d), 1);
    assert_true(d[0].step == NOTIFY_WINDOW_SOON && d[0].lead == 3600);
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* The first request's marks are not the second's: */
    notify_marks_parse("held=2026-03-07T00:00:00Z@2026-03-06T21:59:00Z", &back);
    assert_int_equal(notify_due(&o, &c, &back, d), 2);
    assert_int_equal(d[0].step, NOTIFY_HELD);
    /* The window opens: initiated once, for the second request. */
    notify_obs_t w = {.now = T("2026-03-07T00:00:05Z"), .let_through = true,
                      .current = T("2026-03-07T00:00:00Z"), .request = o.request,
                      .outcome_at = SCHED_NEG_INF, .override_at = SCHED_NEG_INF,
                      .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF};
    assert_int_equal(notify_due(&w, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_INITIATED);
    assert_true(d[0].request == o.request);
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&w, &c, &m, d), 0);
    notify_marks_format(&m, text, sizeof(text));
    notify_marks_parse(text, &back);
    assert_int_equal(notify_due(&w, &c, &back, d), 0);
}

/* Marks merge by (window, request): a later request of the same window
 * wins whichever order they arrive in; an older annotation (no request)
 * is covered by one that names it. */
static void test_marks_merge_requests(void **state)
{
    (void)state;
    notify_marks_t a, b, m;
    notify_marks_parse("held=2026-03-07T00:00:00Z@2026-03-06T22:29:30Z", &a);
    notify_marks_parse("held=2026-03-07T00:00:00Z@2026-03-06T21:59:00Z", &b);
    m = b;
    notify_marks_merge(&m, &a);
    assert_true(m.req[NOTIFY_HELD] == T("2026-03-06T22:29:30Z"));
    m = a;
    notify_marks_merge(&m, &b);
    assert_true(m.req[NOTIFY_HELD] == T("2026-03-06T22:29:30Z"));
    assert_false(notify_marks_cover(&b, &a));
    assert_true(notify_marks_cover(&a, &b));
    notify_marks_parse("held=2026-03-07T00:00:00Z", &b);
    assert_true(b.req[NOTIFY_HELD] == SCHED_NEG_INF);
    assert_true(notify_marks_cover(&a, &b));
    /* A request on a step that has none is malformed: ignored. */
    notify_marks_parse("completed=2026-03-07T00:20:00Z@2026-03-06T22:29:30Z "
                       "held=2026-03-07T00:00:00Z@yesterday",
                       &b);
    assert_true(b.at[NOTIFY_COMPLETED] == SCHED_NEG_INF && b.at[NOTIFY_HELD] == SCHED_NEG_INF);
}

/* A window-soon due is told late as long as the window has not opened;
 * once it opened, the initiated step supersedes it and names the lead. */
static void test_window_soon_late(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m, late;
    notify_due_t d[NOTIFY_DUE_MAX];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-06T20:00:00Z");
    o.request = T("2026-03-06T19:59:00Z");
    assert_int_equal(deliver(&o, &m), 2); /* held, window-soon 48h */
    late = m;
    /* Reached at 23:59:59 instead of 23:00: the 1h notice still goes. */
    o.now = T("2026-03-06T23:59:59Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_WINDOW_SOON);
    assert_true(d[0].lead == 3600);
    notify_marks_note(&m, &d[0], &c);
    notify_obs_t w = {.now = T("2026-03-07T00:00:05Z"), .let_through = true,
                      .current = T("2026-03-07T00:00:00Z"), .request = o.request,
                      .outcome_at = SCHED_NEG_INF, .override_at = SCHED_NEG_INF,
                      .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF};
    assert_int_equal(notify_due(&w, &c, &m, d), 1);
    assert_true(d[0].step == NOTIFY_INITIATED && d[0].superseded == 0);
    /* Reached only once the window opened: no window-soon (the window is
     * open), the initiated step supersedes the 1h notice and says so. */
    assert_int_equal(notify_due(&w, &c, &late, d), 1);
    assert_int_equal(d[0].step, NOTIFY_INITIATED);
    assert_true(d[0].superseded == 3600);
}

/* A request held while the controller was down (or behind its queue),
 * first seen with its window open: no held or window-soon can go any more
 * (the window is open), and the start is told, once, superseding them. */
static void test_held_unseen_until_open(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m;
    notify_due_t d[NOTIFY_DUE_MAX];
    notify_marks_init(&m);
    notify_obs_t w = {.now = T("2026-03-07T00:00:05Z"), .held = true, .let_through = true,
                      .current = T("2026-03-07T00:00:00Z"),
                      .request = T("2026-03-06T21:00:00Z"), .outcome_at = SCHED_NEG_INF,
                      .override_at = SCHED_NEG_INF, .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF};
    assert_int_equal(notify_due(&w, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_INITIATED);
    assert_true(d[0].superseded_held && d[0].superseded == 0);
    assert_true(d[0].request == w.request && d[0].window == w.current);
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&w, &c, &m, d), 0);
    /* Released: the object no longer carries the held request; the record
     * of it alone says nothing more. */
    w.held = false;
    w.now = T("2026-03-07T00:30:00Z");
    assert_int_equal(notify_due(&w, &c, &m, d), 0);
    /* No record of the request (an old object): nothing to name. */
    notify_marks_init(&m);
    w.held = true;
    w.request = SCHED_NEG_INF;
    assert_int_equal(notify_due(&w, &c, &m, d), 0);
    /* Told held for it: the ordinary initiated step, nothing superseded. */
    notify_obs_t o = held_obs("2026-03-04T12:00:00Z");
    o.request = T("2026-03-04T11:00:00Z");
    assert_int_equal(deliver(&o, &m), 1);
    w.request = o.request;
    w.current = o.next;
    assert_int_equal(notify_due(&w, &c, &m, d), 1);
    assert_true(d[0].step == NOTIFY_INITIATED && !d[0].superseded_held);
}

/* A completion seen first long after it happened is not news. */
static void test_old_outcome_not_news(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m;
    notify_due_t d[NOTIFY_DUE_MAX];
    notify_marks_init(&m);
    notify_obs_t o = {.now = T("2026-03-07T02:00:00Z"), .outcome = NOTIFY_OUTCOME_FAILED,
                      .outcome_at = T("2026-03-07T00:20:00Z"), .override_at = SCHED_NEG_INF,
                      .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF};
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    o.now = T("2026-03-07T00:25:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_FAILED);
}

/* A completed change found unhealthy after it: told once per change (its
 * completion the mark), with the completed step; a verdict seen late is
 * told only when the completion was told; a later change is told again;
 * the mark survives the annotation's round trip. */
static void test_unhealthy_after_change(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m, back;
    notify_due_t d[NOTIFY_DUE_MAX];
    char text[NOTIFY_MARKS_LEN];
    notify_marks_init(&m);
    notify_obs_t o = {.now = T("2026-03-07T01:15:00Z"), .outcome = NOTIFY_OUTCOME_COMPLETED,
                      .outcome_at = T("2026-03-07T01:00:00Z"), .override_at = SCHED_NEG_INF,
                      .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF,
                      .after_unhealthy = true, .after_completed = T("2026-03-07T01:00:00Z"),
                      .after_at = T("2026-03-07T01:15:00Z")};
    /* at the completion: completed, healthy so far */
    o.now = T("2026-03-07T01:00:00Z");
    o.after_unhealthy = false;
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_COMPLETED);
    notify_marks_note(&m, &d[0], &c);
    /* Degraded since 01:05, found unhealthy at 01:15 */
    o.now = T("2026-03-07T01:15:00Z");
    o.after_unhealthy = true;
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_UNHEALTHY_AFTER_CHANGE);
    assert_true(d[0].window == T("2026-03-07T01:00:00Z"));
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    notify_marks_format(&m, text, sizeof(text));
    assert_non_null(strstr(text, "unhealthy-after-change=2026-03-07T01:00:00Z"));
    notify_marks_parse(text, &back);
    o.now = T("2026-03-09T00:00:00Z");
    assert_int_equal(notify_due(&o, &c, &back, d), 0);
    /* seen late, its completion told before: told */
    notify_marks_init(&m);
    m.at[NOTIFY_COMPLETED] = T("2026-03-07T01:00:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_UNHEALTHY_AFTER_CHANGE);
    /* seen late, nothing told about that change: not news */
    notify_marks_init(&m);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* healthy: nothing */
    o.now = T("2026-03-07T01:15:00Z");
    o.after_unhealthy = false;
    assert_int_equal(notify_due(&o, &c, &back, d), 0);
    /* post-change: once the verdict is final (healthy at the settle
     * time's end here), once per change, for the checks that ask for it */
    o.now = T("2026-03-07T01:30:00Z");
    o.after_final = true;
    o.after_final_at = T("2026-03-07T01:30:00Z");
    assert_int_equal(notify_due(&o, &c, &back, d), 1);
    assert_int_equal(d[0].step, NOTIFY_POST_CHANGE);
    assert_true(d[0].window == T("2026-03-07T01:00:00Z"));
    notify_marks_note(&back, &d[0], &c);
    assert_int_equal(notify_due(&o, &c, &back, d), 0);
    notify_marks_format(&back, text, sizeof(text));
    assert_non_null(strstr(text, "post-change=2026-03-07T01:00:00Z"));
}

/* A controller restarted after delivering the initiated step but before
 * writing its mark: the held mark (for the window the change went in) is
 * there, and HyperShift's outcome after that window is still told however
 * late the controller sees it; one before that window is not news. */
static void test_outcome_after_held_window(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m;
    notify_due_t d[NOTIFY_DUE_MAX];
    notify_marks_init(&m);
    notify_obs_t h = held_obs("2026-03-06T12:00:00Z");
    h.request = T("2026-03-06T11:00:00Z");
    assert_int_equal(deliver(&h, &m), 2); /* held, window-soon 48h */
    notify_obs_t o = {.now = T("2026-03-07T06:00:00Z"), .outcome = NOTIFY_OUTCOME_COMPLETED,
                      .outcome_at = T("2026-03-07T03:30:00Z"), .override_at = SCHED_NEG_INF,
                      .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF};
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_COMPLETED);
    assert_true(d[0].window == o.outcome_at);
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    o.outcome_at = T("2026-03-06T23:00:00Z"); /* before the window: an older change */
    notify_marks_init(&m);
    assert_int_equal(deliver(&h, &m), 2);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
}

static void test_gate(void **state)
{
    (void)state;
    notify_marks_t m;
    notify_marks_init(&m);
    notify_obs_t o = {.now = T("2026-03-07T00:00:05Z"), .held = true, .restricted = true,
                      .gate_failed = true, .current = T("2026-03-07T00:00:00Z"),
                      .request = SCHED_NEG_INF, .outcome_at = SCHED_NEG_INF,
                      .override_at = SCHED_NEG_INF,
                      .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF};
    assert_int_equal(deliver(&o, &m), 1);
    assert_true(m.at[NOTIFY_GATE_SKIPPED] == T("2026-03-07T00:00:00Z"));
    assert_int_equal(deliver(&o, &m), 0);
    o.current = T("2026-03-14T00:00:00Z"); /* the next window: told again */
    assert_int_equal(deliver(&o, &m), 1);
}

/* A held release no longer recommended in an open window: release-withdrawn
 * once per window, and neither held nor health-gate-skipped meanwhile; the
 * marks round-trip through the annotation's text. */
static void test_release_withdrawn(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m, back;
    notify_due_t d[NOTIFY_DUE_MAX];
    char text[NOTIFY_MARKS_LEN];
    notify_marks_init(&m);
    notify_obs_t o = {.now = T("2026-03-07T00:00:05Z"), .held = true, .restricted = true,
                      .rec_failed = true, .current = T("2026-03-07T00:00:00Z"),
                      .request = SCHED_NEG_INF, .outcome_at = SCHED_NEG_INF,
                      .override_at = SCHED_NEG_INF,
                      .override_end = SCHED_POS_INF, .withdrawn_at = SCHED_NEG_INF};
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_RELEASE_WITHDRAWN);
    assert_string_equal(notify_step_name(d[0].step), "release-withdrawn");
    assert_int_equal(deliver(&o, &m), 1);
    assert_true(m.at[NOTIFY_RELEASE_WITHDRAWN] == T("2026-03-07T00:00:00Z"));
    assert_true(m.at[NOTIFY_GATE_SKIPPED] == SCHED_NEG_INF);
    assert_int_equal(deliver(&o, &m), 0);
    notify_marks_format(&m, text, sizeof(text));
    assert_non_null(strstr(text, "release-withdrawn=2026-03-07T00:00:00Z"));
    notify_marks_parse(text, &back);
    assert_true(back.at[NOTIFY_RELEASE_WITHDRAWN] == T("2026-03-07T00:00:00Z"));
    assert_true(back.at[NOTIFY_WITHDRAWN] == SCHED_NEG_INF);
    o.current = T("2026-03-14T00:00:00Z"); /* the next window: told again */
    assert_int_equal(deliver(&o, &m), 1);
}

static void test_override(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m;
    notify_due_t d[NOTIFY_DUE_MAX];
    notify_marks_init(&m);
    notify_obs_t o = {.now = T("2026-03-05T10:01:00Z"), .request = SCHED_NEG_INF,
                      .outcome_at = SCHED_NEG_INF,
                      .override_at = T("2026-03-05T10:00:00Z"),
                      .override_end = T("2026-03-05T14:00:00Z"), .withdrawn_at = SCHED_NEG_INF};
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_OVERRIDE_SET);
    assert_true(d[0].until == T("2026-03-05T14:00:00Z"));
    notify_marks_note(&m, &d[0], &c);
    assert_true(notify_due_wake(&o, &c) == T("2026-03-05T14:00:00Z"));
    /* Changed three hours later (not fresh to a new controller, but the
     * set before was told). */
    o.override_at = T("2026-03-05T12:00:00Z");
    o.now = T("2026-03-05T13:00:00Z");
    assert_int_equal(deliver(&o, &m), 1);
    /* Expired: told once, also by a controller that starts an hour late. */
    o.now = T("2026-03-05T15:00:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_OVERRIDE_EXPIRED);
    notify_marks_note(&m, &d[0], &c);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* An old override on an object never told: nothing. */
    notify_marks_init(&m);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
}

/* Held with no window ahead: one held, keyed "none". */
static void test_held_no_window(void **state)
{
    (void)state;
    notify_marks_t m, back;
    char text[NOTIFY_MARKS_LEN];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-04T12:00:00Z");
    o.has_next = false;
    assert_int_equal(deliver(&o, &m), 1);
    notify_marks_format(&m, text, sizeof(text));
    assert_string_equal(text, "held=none");
    notify_marks_parse(text, &back);
    assert_int_equal(deliver(&o, &back), 0);
}

static void test_parse_bad_tokens(void **state)
{
    (void)state;
    notify_marks_t m;
    char text[NOTIFY_MARKS_LEN];
    notify_marks_parse("held= completed=yesterday bogus=2026-03-07T00:00:00Z = == "
                       "window-soon-x=2026-03-07T00:00:00Z window-soon-0h=2026-03-07T00:00:00Z "
                       "window-soon-90m=2026-03-07T00:00:00Z initiated=2026-03-07T00:00:00Z",
                       &m);
    notify_marks_format(&m, text, sizeof(text));
    assert_string_equal(text, "window-soon-90m=2026-03-07T00:00:00Z "
                              "initiated=2026-03-07T00:00:00Z");
    /* Too small a buffer: whole tokens only. */
    char small[40];
    notify_marks_format(&m, small, sizeof(small));
    assert_string_equal(small, "window-soon-90m=2026-03-07T00:00:00Z");
}

/* A request held (told held), then withdrawn on Wednesday: withdrawn told
 * once, keyed by the withdrawal's time, the marks say so; no initiated at
 * the window (nothing is let through); a restart does not tell it again,
 * a controller that was down two days still tells it (it told held), and
 * a second withdrawal later is told too. An old withdrawal on an object
 * never told anything is not news. */
static void test_withdrawn(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m, back;
    notify_due_t d[NOTIFY_DUE_MAX];
    char text[NOTIFY_MARKS_LEN];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-03T12:00:00Z");
    o.request = T("2026-03-03T11:59:00Z");
    assert_int_equal(deliver(&o, &m), 1); /* held */
    o.held = false;
    o.now = T("2026-03-04T09:00:30Z");
    o.withdrawn_at = T("2026-03-04T09:00:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 1);
    assert_int_equal(d[0].step, NOTIFY_WITHDRAWN);
    assert_true(d[0].window == o.withdrawn_at);
    notify_marks_note(&m, &d[0], &c);
    notify_marks_format(&m, text, sizeof(text));
    assert_non_null(strstr(text, "withdrawn=2026-03-04T09:00:00Z"));
    notify_marks_parse(text, &back);
    assert_int_equal(notify_due(&o, &c, &back, d), 0);
    /* The window opens: nothing was let through, nothing to tell. */
    o.restricted = false;
    o.current = T("2026-03-07T00:00:00Z");
    o.now = T("2026-03-07T00:00:05Z");
    assert_int_equal(notify_due(&o, &c, &back, d), 0);

    /* Down for two days after telling held: still told. */
    notify_marks_init(&m);
    o = held_obs("2026-03-03T12:00:00Z");
    o.request = T("2026-03-03T11:59:00Z");
    assert_int_equal(deliver(&o, &m), 1);
    o.held = false;
    o.withdrawn_at = T("2026-03-04T09:00:00Z");
    o.now = T("2026-03-06T09:00:00Z");
    assert_int_equal(deliver(&o, &m), 1);
    o.withdrawn_at = T("2026-03-06T10:00:00Z"); /* another request, withdrawn again */
    o.now = T("2026-03-06T12:00:00Z");
    assert_int_equal(deliver(&o, &m), 1);

    /* Never told a thing: an old withdrawal is not news, a fresh one is. */
    notify_marks_init(&m);
    o.now = T("2026-03-06T11:00:00Z");
    o.withdrawn_at = T("2026-03-06T10:00:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    o.now = T("2026-03-06T10:05:00Z");
    assert_int_equal(deliver(&o, &m), 1);
    /* A withdrawal stamped later than now (a skewed clock) waits. */
    notify_marks_init(&m);
    o.withdrawn_at = T("2026-03-06T10:06:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
}

/* A change held since 2026-02-01 with a 30-day warning: told on 03-03 at
 * the occasion, not again that week, again a week later, and anew for a
 * newer request; the marks survive the annotation's round trip; the wake is
 * the next occasion; a change no longer held is not told. */
static void test_hold_aging(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m, back;
    notify_due_t d[NOTIFY_DUE_MAX];
    char text[NOTIFY_MARKS_LEN];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-04T12:00:00Z");
    o.request = T("2026-02-01T09:00:00Z");
    assert_int_equal(deliver(&o, &m), 1); /* held */
    /* the occasion: 30 days after the request */
    o.aging = true;
    o.aging_at = T("2026-03-03T09:00:00Z");
    o.aging_next = T("2026-03-10T09:00:00Z");
    size_t n = notify_due(&o, &c, &m, d);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].step, NOTIFY_HOLD_AGING);
    assert_true(d[0].window == T("2026-03-03T09:00:00Z"));
    assert_true(d[0].request == T("2026-02-01T09:00:00Z"));
    assert_true(d[0].until == T("2026-03-07T00:00:00Z")); /* the next start */
    assert_true(notify_due_wake(&o, &c) == T("2026-03-05T00:00:00Z")); /* the 48h lead */
    assert_int_equal(deliver(&o, &m), 1);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* the annotation carries it: a restarted controller does not tell it again */
    notify_marks_format(&m, text, sizeof(text));
    assert_non_null(strstr(text, "hold-aging=2026-03-03T09:00:00Z@2026-02-01T09:00:00Z"));
    notify_marks_parse(text, &back);
    assert_int_equal(notify_due(&o, &c, &back, d), 0);
    /* the wake after the last lead is the next occasion */
    o.now = T("2026-03-06T23:30:00Z");
    assert_int_equal(deliver(&o, &m), 1); /* window-soon 1h */
    o.has_next = false;
    o.now = T("2026-03-07T01:00:00Z");
    assert_true(notify_due_wake(&o, &c) == T("2026-03-10T09:00:00Z"));
    /* a week later: told again */
    o.now = T("2026-03-10T09:00:00Z");
    o.aging_at = T("2026-03-10T09:00:00Z");
    o.aging_next = T("2026-03-17T09:00:00Z");
    n = notify_due(&o, &c, &m, d);
    assert_int_equal(n, 2); /* held (no window now) and hold-aging */
    assert_int_equal(d[1].step, NOTIFY_HOLD_AGING);
    assert_true(d[1].until == SCHED_POS_INF);
    assert_int_equal(deliver(&o, &m), 2);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* no longer held: nothing, and no wake for it */
    o.held = false;
    o.aging_at = T("2026-03-17T09:00:00Z");
    o.now = T("2026-03-17T09:00:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    assert_true(notify_due_wake(&o, &c) == SCHED_POS_INF);
    /* a newer request held as long: told for it too */
    o.held = true;
    o.request = T("2026-02-20T00:00:00Z");
    o.aging_at = T("2026-03-22T00:00:00Z");
    o.now = T("2026-03-22T00:00:00Z");
    n = notify_due(&o, &c, &m, d);
    assert_int_equal(n, 2);
    assert_int_equal(d[1].step, NOTIFY_HOLD_AGING);
    assert_true(d[1].request == T("2026-02-20T00:00:00Z"));
    /* not aging yet: nothing */
    o.aging = false;
    assert_int_equal(notify_due(&o, &c, &m, d), 1); /* held only */
}

/* The release waves' steps: soak-waiting once per (soak end, request),
 * wave-halted once per halt, wave-resumed once per halt told; none for a
 * change no longer held. */
static void test_wave_steps(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m, back;
    notify_due_t d[NOTIFY_DUE_MAX];
    char text[NOTIFY_MARKS_LEN];
    notify_marks_init(&m);
    notify_obs_t o = held_obs("2026-03-04T12:00:00Z");
    o.request = T("2026-03-04T09:00:00Z");
    o.wave = 1;
    o.wave_until = SCHED_POS_INF; /* too few canaries completed it */
    size_t n = notify_due(&o, &c, &m, d);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].step, NOTIFY_HELD);
    assert_int_equal(d[1].step, NOTIFY_SOAK_WAITING);
    assert_true(d[1].window == T("2026-03-04T09:00:00Z")); /* no end known: the request */
    assert_true(d[1].until == SCHED_POS_INF);
    assert_true(d[1].request == T("2026-03-04T09:00:00Z"));
    assert_int_equal(deliver(&o, &m), 2);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* the canaries completed it: the soak's end is known, told again */
    o.wave_until = T("2026-03-06T08:00:00Z");
    n = notify_due(&o, &c, &m, d);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].step, NOTIFY_SOAK_WAITING);
    assert_true(d[0].until == T("2026-03-06T08:00:00Z"));
    assert_int_equal(deliver(&o, &m), 1);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* an end learnt earlier than told is not news; a new request is */
    o.wave_until = T("2026-03-05T08:00:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    o.wave_until = T("2026-03-06T08:00:00Z");
    /* a canary turns Degraded: halted once, by its since */
    o.wave = 2;
    o.wave_since = T("2026-03-04T11:59:00Z");
    n = notify_due(&o, &c, &m, d);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].step, NOTIFY_WAVE_HALTED);
    assert_true(d[0].window == T("2026-03-04T11:59:00Z"));
    assert_int_equal(deliver(&o, &m), 1);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* the marks survive a restart */
    notify_marks_format(&m, text, sizeof(text));
    assert_non_null(strstr(text, "soak-waiting=2026-03-06T08:00:00Z@2026-03-04T09:00:00Z"));
    assert_non_null(strstr(text, "wave-halted=2026-03-04T11:59:00Z"));
    notify_marks_parse(text, &back);
    assert_int_equal(notify_due(&o, &c, &back, d), 0);
    /* healthy again, the soak over: resumed once, for that halt */
    o.wave = 0;
    n = notify_due(&o, &c, &m, d);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].step, NOTIFY_WAVE_RESUMED);
    assert_true(d[0].window == T("2026-03-04T11:59:00Z"));
    assert_int_equal(deliver(&o, &m), 1);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* a second halt (a new since) is told, and its end */
    o.wave = 2;
    o.wave_since = T("2026-03-05T03:00:00Z");
    assert_int_equal(deliver(&o, &m), 1);
    assert_true(m.at[NOTIFY_WAVE_HALTED] == T("2026-03-05T03:00:00Z"));
    /* ... but not while nothing is held any more (withdrawn): neither the
     * halt's end nor a soak */
    o.held = false;
    o.wave = 0;
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    o.wave = 1;
    o.wave_until = T("2026-03-09T08:00:00Z");
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    o.held = true;
    o.request = T("2026-03-05T10:00:00Z");
    n = notify_due(&o, &c, &m, d);
    /* held (a new request), soak-waiting, and the second halt's end */
    assert_int_equal(n, 3);
    assert_int_equal(d[1].step, NOTIFY_SOAK_WAITING);
    assert_true(d[1].request == T("2026-03-05T10:00:00Z"));
    assert_int_equal(d[2].step, NOTIFY_WAVE_RESUMED);
    assert_true(d[2].window == T("2026-03-05T03:00:00Z"));
    assert_int_equal(deliver(&o, &m), 3);
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
    /* marks merged from an older annotation cover what was delivered */
    notify_marks_t old_marks = back;
    notify_marks_merge(&old_marks, &m);
    assert_true(notify_marks_cover(&old_marks, &m));
    assert_true(old_marks.req[NOTIFY_SOAK_WAITING] == T("2026-03-05T10:00:00Z"));
    /* a halt whose since is not known is told once */
    notify_marks_init(&m);
    o = held_obs("2026-03-04T12:00:00Z");
    o.wave = 2;
    o.wave_since = SCHED_POS_INF;
    assert_int_equal(deliver(&o, &m), 2); /* held, wave-halted */
    assert_int_equal(notify_due(&o, &c, &m, d), 0);
}

/* Every step marked at once, each with a request where it takes one, and
 * four leads: the annotation's text holds them all (a mark left out would
 * be written again at every reconcile). */
static void test_marks_all_fit(void **state)
{
    (void)state;
    notify_config_t c = cfg();
    notify_marks_t m, back;
    char text[NOTIFY_MARKS_LEN];
    c.leads[0] = 30 * 86400 - 1;
    c.leads[1] = 48 * 3600 + 59 * 60;
    c.leads[2] = 3600 + 59;
    c.leads[3] = 59;
    c.n_leads = 4;
    notify_marks_init(&m);
    for (size_t st = 0; st < NOTIFY_STEP_COUNT; st++) {
        notify_due_t d = {.step = (notify_step_t)st, .window = T("2026-12-31T23:59:59Z"),
                          .request = T("2026-12-30T23:59:59Z")};
        if (st == NOTIFY_WINDOW_SOON)
            for (size_t i = 0; i < c.n_leads; i++) {
                d.lead = c.leads[i];
                notify_marks_note(&m, &d, &c);
            }
        else
            notify_marks_note(&m, &d, &c);
    }
    notify_marks_format(&m, text, sizeof(text));
    notify_marks_parse(text, &back);
    assert_true(notify_marks_cover(&back, &m));
    assert_non_null(strstr(text, "hold-aging=2026-12-31T23:59:59Z@2026-12-30T23:59:59Z"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_then_leads),
        cmocka_unit_test(test_late_hold_shortest_lead),
        cmocka_unit_test(test_lifecycle_restart),
        cmocka_unit_test(test_old_outcome_not_news),
        cmocka_unit_test(test_outcome_after_held_window),
        cmocka_unit_test(test_gate),
        cmocka_unit_test(test_release_withdrawn),
        cmocka_unit_test(test_override),
        cmocka_unit_test(test_held_no_window),
        cmocka_unit_test(test_parse_bad_tokens),
        cmocka_unit_test(test_second_request_same_window),
        cmocka_unit_test(test_marks_merge_requests),
        cmocka_unit_test(test_window_soon_late),
        cmocka_unit_test(test_held_unseen_until_open),
        cmocka_unit_test(test_withdrawn),
        cmocka_unit_test(test_unhealthy_after_change),
        cmocka_unit_test(test_hold_aging),
        cmocka_unit_test(test_wave_steps),
        cmocka_unit_test(test_marks_all_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
