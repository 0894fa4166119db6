/* Tests of pkg/policy/policy: validation messages for every rejected input,
 * the translation of structured recurrences into rrules, defaults, and the
 * timeline each strategy produces. Test documents are written with single
 * quotes, which q() turns into double quotes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "schedule/testutil_sched.h"

#define NOW ((sched_time_t)1767225600) /* 2026-01-01T00:00:00Z */

/* Parses a single-quoted JSON text; aborts on malformed test input. */
static json_t *q(const char *text)
{
    char *s = strdup(text);
    json_error_t je;
    json_t *doc;
    size_t i;

    assert_non_null(s);
    for (i = 0; s[i]; i++)
        if (s[i] == '\'')
            s[i] = '"';
    doc = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (doc == NULL)
        fail_msg("bad test JSON (%s): %s", je.text, s);
    free(s);
    return doc;
}

#define DOC(spec)                                                                          \
    "{'apiVersion':'changemanagement.hypershift.openshift.io/v1alpha1',"                  \
    "'kind':'HostedChangeManagementPolicy',"                                              \
    "'metadata':{'name':'p','namespace':'ns','generation':3},'spec':" spec "}"
#define MS(ms) DOC("{'strategy':'MaintenanceSchedule','maintenanceSchedule':" ms "}")
#define PERMIT(p) MS("{'permit':" p "}")
#define REC(r) PERMIT("{'recurrence':" r "}")
#define RULE "'rrule':'FREQ=DAILY'"

/* ---- validation errors: input => exact message --------------------------- */

typedef struct bad_case {
    const char *doc;      /* single-quoted JSON */
    const char *message;  /* expected exact message */
} bad_case_t;

static const bad_case_t BAD[] = {
    /* document and metadata */
    {"[]", "document: must be a JSON object, not an array"},
    {"{'spec':{'strategy':'Permissive'},'metadata':'x'}", "metadata: must be an object, not a string"},
    {"{'spec':{'strategy':'Permissive'},'metadata':{'name':1}}",
     "metadata.name: must be a string, not a number"},
    {"{'spec':{'strategy':'Permissive'},'metadata':{'namespace':[]}}",
     "metadata.namespace: must be a string, not an array"},
    {"{'spec':{'strategy':'Permissive'},'metadata':{'generation':1.5}}",
     "metadata.generation: must be an integer, not 1.5"},
    {"{'spec':{'strategy':'Permissive'},'metadata':{'generation':'1'}}",
     "metadata.generation: must be an integer, not a string"},
    {"{'spec':{'strategy':'Permissive'},'metadata':{'generation':-1}}",
     "metadata.generation: must not be negative"},
    {"{'spec':{'strategy':'Permissive'},'specc':{}}", "specc: unknown field"},
    {"{'spec':{'strategy':'Permissive'},'apiVersion':'v1'}",
     "apiVersion: \"v1\" is not changemanagement.hypershift.openshift.io/v1alpha1"},
    {"{'spec':{'strategy':'Permissive'},'apiVersion':1}", "apiVersion: must be a string, not a number"},
    {"{'spec':{'strategy':'Permissive'},'kind':'ConfigMap'}",
     "kind: \"ConfigMap\" is not HostedChangeManagementPolicy"},
    {"{'spec':{'strategy':'Permissive'},'kind':true}", "kind: must be a string, not a boolean"},
    {"{'metadata':{}}", "spec: required field is missing"},
    {"{'spec':null}", "spec: required field is missing"},
    {"{'spec':'Permissive'}", "spec: must be an object, not a string"},
    {DOC("{'strategy':'Permissive','stratgy':'x'}"), "spec.stratgy: unknown field"},
    {DOC("{}"), "spec.strategy: required field is missing"},
    {DOC("{'strategy':7}"), "spec.strategy: must be a string, not a number"},
    {DOC("{'strategy':'Sometimes'}"),
     "spec.strategy: \"Sometimes\" is not one of Permissive, Restrictive, MaintenanceSchedule"},
    {DOC("{'strategy':'permissive'}"),
     "spec.strategy: \"permissive\" is not one of Permissive, Restrictive, MaintenanceSchedule"},
    {DOC("{'strategy':'Bad\\u0001\\\\'}"),
     "spec.strategy: \"Bad\\x01\\\\\" is not one of Permissive, Restrictive, MaintenanceSchedule"},
    {DOC("{'strategy':'MaintenanceSchedule','maintenanceSchedule':[]}"),
     "spec.maintenanceSchedule: must be an object, not an array"},
    /* a maintenanceSchedule is validated whatever the strategy */
    {DOC("{'strategy':'Permissive','maintenanceSchedule':{'timezone':'UTC'}}"),
     "spec.maintenanceSchedule.timezone: unknown field"},
    /* maintenanceSchedule */
    {MS("{'timeZone':3}"), "spec.maintenanceSchedule.timeZone: must be a string, not a number"},
    {MS("{'timeZone':''}"), "spec.maintenanceSchedule.timeZone: must not be empty (omit it for UTC)"},
    {MS("{'timeZone':'Mars/Olympus_Mons'}"),
     "spec.maintenanceSchedule.timeZone: \"Mars/Olympus_Mons\" is not a known IANA time zone"},
    {MS("{'timeZone':'Europe/Zurich\\u0000x'}"),
     "spec.maintenanceSchedule.timeZone: must not contain NUL characters"},
    {MS("{'permit':'FREQ=DAILY'}"),
     "spec.maintenanceSchedule.permit: must be an object, not a string"},
    {MS("{'exclude':{}}"), "spec.maintenanceSchedule.exclude: must be an array, not an object"},
    /* permit */
    {PERMIT("{" RULE ",'recurrence':{'frequency':'Daily'}}"),
     "spec.maintenanceSchedule.permit: recurrence and rrule are mutually exclusive"},
    {PERMIT("{" RULE ",'start':'01:00'}"), "spec.maintenanceSchedule.permit.start: unknown field"},
    {PERMIT("{'rrule':5}"), "spec.maintenanceSchedule.permit.rrule: must be a string, not a number"},
    {PERMIT("{'rrule':''}"), "spec.maintenanceSchedule.permit.rrule: must not be empty"},
    {PERMIT("{'rrule':'FREQ=DAILY\\u0000;COUNT=1'}"),
     "spec.maintenanceSchedule.permit.rrule: must not contain NUL characters"},
    {PERMIT("{'recurrence':'Daily'}"),
     "spec.maintenanceSchedule.permit.recurrence: must be an object, not a string"},
    {PERMIT("{" RULE ",'startTime':'25:00'}"),
     "spec.maintenanceSchedule.permit.startTime: \"25:00\" is not a valid HH:MM time"},
    {PERMIT("{" RULE ",'startTime':'23:60'}"),
     "spec.maintenanceSchedule.permit.startTime: \"23:60\" is not a valid HH:MM time"},
    {PERMIT("{" RULE ",'startTime':'7:00'}"),
     "spec.maintenanceSchedule.permit.startTime: \"7:00\" is not a valid HH:MM time"},
    {PERMIT("{" RULE ",'startTime':'07:00:00'}"),
     "spec.maintenanceSchedule.permit.startTime: \"07:00:00\" is not a valid HH:MM time"},
    {PERMIT("{" RULE ",'startTime':'0700'}"),
     "spec.maintenanceSchedule.permit.startTime: \"0700\" is not a valid HH:MM time"},
    {PERMIT("{" RULE ",'startTime':'07:0x'}"),
     "spec.maintenanceSchedule.permit.startTime: \"07:0x\" is not a valid HH:MM time"},
    {PERMIT("{" RULE ",'startTime':700}"),
     "spec.maintenanceSchedule.permit.startTime: must be a string, not a number"},
    {PERMIT("{" RULE ",'duration':8}"),
     "spec.maintenanceSchedule.permit.duration: must be a string, not a number"},
#define DUR_BAD(d)                                                                         \
    {PERMIT("{" RULE ",'duration':'" d "'}"),                                              \
     "spec.maintenanceSchedule.permit.duration: \"" d                                      \
     "\" is not a valid duration (hours, minutes and seconds, e.g. 8h, 90m, 1h30m or 8h0m0s)"}
    DUR_BAD(""), DUR_BAD("8"), DUR_BAD("8x"), DUR_BAD("h"), DUR_BAD("8h8h"), DUR_BAD("30m1h"),
    DUR_BAD("1h30"), DUR_BAD("1.5h"), DUR_BAD("-1h"), DUR_BAD("8 h"), DUR_BAD("1234567890h"),
    DUR_BAD("1d"), DUR_BAD("0s1m"), DUR_BAD("1s1s"), DUR_BAD("500ms"), DUR_BAD("1h0m0s0"),
    DUR_BAD("+1h"), DUR_BAD("1H"), DUR_BAD("1h 0m"),
    {PERMIT("{" RULE ",'duration':'0h'}"),
     "spec.maintenanceSchedule.permit.duration: \"0h\" must be longer than zero"},
    {PERMIT("{" RULE ",'duration':'0h0m'}"),
     "spec.maintenanceSchedule.permit.duration: \"0h0m\" must be longer than zero"},
    {PERMIT("{" RULE ",'duration':'8761h'}"),
     "spec.maintenanceSchedule.permit.duration: \"8761h\" is longer than the maximum of 8760h"},
    {PERMIT("{" RULE ",'duration':'8760h1m'}"),
     "spec.maintenanceSchedule.permit.duration: \"8760h1m\" is longer than the maximum of 8760h"},
    {PERMIT("{" RULE ",'duration':'8760h0m1s'}"),
     "spec.maintenanceSchedule.permit.duration: \"8760h0m1s\" is longer than the maximum of "
     "8760h"},
    {PERMIT("{" RULE ",'duration':'0h0m0s'}"),
     "spec.maintenanceSchedule.permit.duration: \"0h0m0s\" must be longer than zero"},
    {PERMIT("{" RULE ",'duration':'999999999h'}"),
     "spec.maintenanceSchedule.permit.duration: \"999999999h\" is longer than the maximum of "
     "8760h"},
    /* recurrence */
    {REC("{}"), "spec.maintenanceSchedule.permit.recurrence.frequency: required field is missing"},
    {REC("{'frequency':'Hourly'}"),
     "spec.maintenanceSchedule.permit.recurrence.frequency: \"Hourly\" is not one of Daily, "
     "Weekly, Monthly, Yearly"},
    {REC("{'frequency':'Daily','every':2}"),
     "spec.maintenanceSchedule.permit.recurrence.every: unknown field"},
    {REC("{'frequency':'Daily','weekly':{'daysOfWeek':['Monday']}}"),
     "spec.maintenanceSchedule.permit.recurrence.weekly: not allowed when frequency is Daily"},
    {REC("{'frequency':'Weekly','daily':{}}"),
     "spec.maintenanceSchedule.permit.recurrence.daily: not allowed when frequency is Weekly"},
    {REC("{'frequency':'Weekly'}"),
     "spec.maintenanceSchedule.permit.recurrence.weekly: required when frequency is Weekly"},
    {REC("{'frequency':'Monthly'}"),
     "spec.maintenanceSchedule.permit.recurrence.monthly: required when frequency is Monthly"},
    {REC("{'frequency':'Yearly'}"),
     "spec.maintenanceSchedule.permit.recurrence.yearly: required when frequency is Yearly"},
    {REC("{'frequency':'Daily','daily':[]}"),
     "spec.maintenanceSchedule.permit.recurrence.daily: must be an object, not an array"},
    {REC("{'frequency':'Daily','daily':{'intervall':2}}"),
     "spec.maintenanceSchedule.permit.recurrence.daily.intervall: unknown field"},
    {REC("{'frequency':'Daily','daily':{'interval':0}}"),
     "spec.maintenanceSchedule.permit.recurrence.daily.interval: 0 is out of range 1..730"},
    {REC("{'frequency':'Daily','daily':{'interval':731}}"),
     "spec.maintenanceSchedule.permit.recurrence.daily.interval: 731 is out of range 1..730"},
    {REC("{'frequency':'Daily','daily':{'interval':2.5}}"),
     "spec.maintenanceSchedule.permit.recurrence.daily.interval: must be an integer, not 2.5"},
    {REC("{'frequency':'Daily','daily':{'interval':'2'}}"),
     "spec.maintenanceSchedule.permit.recurrence.daily.interval: must be an integer, not a "
     "string"},
    /* weekly */
#define WEEKLY(w) REC("{'frequency':'Weekly','weekly':" w "}")
#define WP "spec.maintenanceSchedule.permit.recurrence.weekly"
    {WEEKLY("{}"), WP ".daysOfWeek: required field is missing"},
    {WEEKLY("{'daysOfWeek':'Monday'}"), WP ".daysOfWeek: must be an array, not a string"},
    {WEEKLY("{'daysOfWeek':[]}"), WP ".daysOfWeek: must list at least one day"},
    {WEEKLY("{'daysOfWeek':['Monday','Tuesday','Funday']}"),
     WP ".daysOfWeek[2]: \"Funday\" is not a day of the week (Monday..Sunday)"},
    {WEEKLY("{'daysOfWeek':['monday']}"),
     WP ".daysOfWeek[0]: \"monday\" is not a day of the week (Monday..Sunday)"},
    {WEEKLY("{'daysOfWeek':['Monday',1]}"), WP ".daysOfWeek[1]: must be a string, not a number"},
    {WEEKLY("{'daysOfWeek':['Sunday'],'interval':27}"), WP ".interval: 27 is out of range 1..26"},
    {WEEKLY("{'daysOfWeek':['Sunday'],'interval':0}"), WP ".interval: 0 is out of range 1..26"},
    {WEEKLY("{'daysOfWeek':['Sunday'],'days':[]}"), WP ".days: unknown field"},
    /* monthly */
#define MONTHLY(m) REC("{'frequency':'Monthly','monthly':" m "}")
#define MP "spec.maintenanceSchedule.permit.recurrence.monthly"
    {MONTHLY("{}"), MP ".by: required field is missing"},
    {MONTHLY("{'by':'Week'}"), MP ".by: \"Week\" is not one of Day, Date"},
    {MONTHLY("{'by':'Date','dates':{}}"), MP ".dates: unknown field"},
    {MONTHLY("{'by':'Date'}"), MP ".date: required when by is Date"},
    {MONTHLY("{'by':'Day'}"), MP ".day: required when by is Day"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':[1]},'day':{}}"),
     MP ".day: not allowed when by is Date"},
    {MONTHLY("{'by':'Day','date':{'datesOfMonth':[1]}}"), MP ".date: not allowed when by is Day"},
    {MONTHLY("{'by':'Date','date':[]}"), MP ".date: must be an object, not an array"},
    {MONTHLY("{'by':'Date','date':{}}"), MP ".date.datesOfMonth: required field is missing"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':[]}}"),
     MP ".date.datesOfMonth: must list at least one date"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':[1,0]}}"),
     MP ".date.datesOfMonth[1]: 0 is out of range 1..31"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':[32]}}"),
     MP ".date.datesOfMonth[0]: 32 is out of range 1..31"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':[-1]}}"),
     MP ".date.datesOfMonth[0]: -1 is out of range 1..31"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':['1']}}"),
     MP ".date.datesOfMonth[0]: must be an integer, not a string"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':[1.0]}}"),
     MP ".date.datesOfMonth[0]: must be an integer, not 1"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':[5],'interval':12}}"),
     MP ".date.interval: 12 is out of range 1..11"},
    {MONTHLY("{'by':'Date','date':{'datesOfMonth':[5],'month':'May'}}"),
     MP ".date.month: unknown field"},
    {MONTHLY("{'by':'Day','day':{}}"), MP ".day.days: required field is missing"},
    {MONTHLY("{'by':'Day','day':{'days':[]}}"), MP ".day.days: must list at least one day"},
    {MONTHLY("{'by':'Day','day':{'days':['Monday']}}"),
     MP ".day.days[0]: must be an object, not a string"},
    {MONTHLY("{'by':'Day','day':{'days':[{'dayOfWeek':'Monday'}]}}"),
     MP ".day.days[0].weekOfMonth: required field is missing"},
    {MONTHLY("{'by':'Day','day':{'days':[{'weekOfMonth':'Sixth','dayOfWeek':'Monday'}]}}"),
     MP ".day.days[0].weekOfMonth: \"Sixth\" is not one of First, Second, Third, Fourth, Fifth, "
        "Last"},
    {MONTHLY("{'by':'Day','day':{'days':[{'weekOfMonth':'First'}]}}"),
     MP ".day.days[0].dayOfWeek: required field is missing"},
    {MONTHLY("{'by':'Day','day':{'days':[{'weekOfMonth':'First','dayOfWeek':'Mon'}]}}"),
     MP ".day.days[0].dayOfWeek: \"Mon\" is not a day of the week (Monday..Sunday)"},
    {MONTHLY("{'by':'Day','day':{'days':[{'weekOfMonth':1,'dayOfWeek':'Monday'}]}}"),
     MP ".day.days[0].weekOfMonth: must be a string, not a number"},
    {MONTHLY("{'by':'Day','day':{'days':[{'weekOfMonth':'Last','dayOfWeek':'Friday','at':1}]}}"),
     MP ".day.days[0].at: unknown field"},
    {MONTHLY("{'by':'Day','day':{'days':[{'weekOfMonth':'Last','dayOfWeek':'Friday'}],"
             "'interval':0}}"),
     MP ".day.interval: 0 is out of range 1..11"},
    /* yearly */
#define YEARLY(y) REC("{'frequency':'Yearly','yearly':" y "}")
#define YP "spec.maintenanceSchedule.permit.recurrence.yearly"
    {YEARLY("{'by':'Date','date':{'datesOfMonth':[1]}}"), YP ".date.month: required field is missing"},
    {YEARLY("{'by':'Date','date':{'datesOfMonth':[1],'month':'Jan'}}"),
     YP ".date.month: \"Jan\" is not a month (January..December)"},
    {YEARLY("{'by':'Date','date':{'datesOfMonth':[1],'month':1}}"),
     YP ".date.month: must be a string, not a number"},
    {YEARLY("{'by':'Date','date':{'datesOfMonth':[1],'month':'May','interval':1}}"),
     YP ".date.interval: unknown field"},
    {YEARLY("{'by':'Day','day':{'days':[{'weekOfMonth':'First','dayOfWeek':'Monday'}]}}"),
     YP ".day.month: required field is missing"},
    {YEARLY("{'by':'Day','day':{'days':[{'weekOfMonth':'First','dayOfWeek':'Sunday'}],"
            "'month':'Smarch'}}"),
     YP ".day.month: \"Smarch\" is not a month (January..December)"},
    {YEARLY("{'by':'Day','day':{'days':[],'month':'May'}}"), YP ".day.days: must list at least one day"},
    /* a month that never has any of the dates */
    {YEARLY("{'by':'Date','date':{'datesOfMonth':[30,31],'month':'February'}}"),
     YP ".date.datesOfMonth: February has at most 29 days, so none of these dates ever occurs"},
    {YEARLY("{'by':'Date','date':{'datesOfMonth':[31],'month':'April'}}"),
     YP ".date.datesOfMonth: April has at most 30 days, so none of these dates ever occurs"},
    {PERMIT("{'rrule':'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30'}"),
     "spec.maintenanceSchedule.permit.rrule: BYMONTHDAY and BYMONTH together select no date"},
    /* exclude */
#define EXCL(e) MS("{'exclude':" e "}")
#define XP "spec.maintenanceSchedule.exclude"
    {EXCL("['2026-01-01']"), XP "[0]: must be an object, not a string"},
    {EXCL("[{'fromDate':'2026-01-01'},{'untilDate':'2026-01-02'}]"),
     XP "[1].fromDate: required field is missing"},
    {EXCL("[{'fromDate':'2026-01-01','why':'x'}]"), XP "[0].why: unknown field"},
    {EXCL("[{'fromDate':20260101}]"), XP "[0].fromDate: must be a string, not a number"},
    {EXCL("[{'fromDate':'2026-01-01','scope':'nodes'}]"),
     XP "[0].scope: \"nodes\" is not one of AllChanges, MinorUpgrades, Nodes, "
        "MinorUpgradesAndNodes"},
    {EXCL("[{'fromDate':'2026-01-01'},{'fromDate':'2026-01-01','scope':''}]"),
     XP "[1].scope: \"\" is not one of AllChanges, MinorUpgrades, Nodes, MinorUpgradesAndNodes"},
    {EXCL("[{'fromDate':'2026-01-01','scope':2}]"), XP "[0].scope: must be a string, not a number"},
    /* spec.exclusionCalendars (the duplicate and the count: test_calendars.c) */
    {DOC("{'strategy':'Permissive','exclusionCalendars':{}}"),
     "spec.exclusionCalendars: must be an array, not an object"},
    {DOC("{'strategy':'Permissive','exclusionCalendars':[{}]}"),
     "spec.exclusionCalendars[0].name: required field is missing"},
    {DOC("{'strategy':'Permissive','exclusionCalendars':[{'name':'Freeze'}]}"),
     "spec.exclusionCalendars[0].name: \"Freeze\" is not a ConfigMap name (lower-case letters, "
     "digits, '-' and '.', at most 253)"},
    {DOC("{'strategy':'Permissive','exclusionCalendars':[{'name':'-f'}]}"),
     "spec.exclusionCalendars[0].name: \"-f\" is not a ConfigMap name (lower-case letters, "
     "digits, '-' and '.', at most 253)"},
    {DOC("{'strategy':'Permissive','exclusionCalendars':[{'name':'f','key':'a/b'}]}"),
     "spec.exclusionCalendars[0].key: \"a/b\" is not a ConfigMap key (letters, digits, '-', '_' "
     "and '.', at most 253)"},
    {DOC("{'strategy':'Permissive','exclusionCalendars':[{'name':'f','key':'..'}]}"),
     "spec.exclusionCalendars[0].key: \"..\" is not a ConfigMap key (letters, digits, '-', '_' "
     "and '.', at most 253)"},
    {DOC("{'strategy':'Permissive','exclusionCalendars':[{'name':'f','scope':'Workers'}]}"),
     "spec.exclusionCalendars[0].scope: \"Workers\" is not one of AllChanges, MinorUpgrades, "
     "Nodes, MinorUpgradesAndNodes"},
    {DOC("{'strategy':'Permissive','exclusionCalendars':[{'name':'f','when':1}]}"),
     "spec.exclusionCalendars[0].when: unknown field"},
    {DOC("{'strategy':'Permissive','exclusionCalendars':[{'name':7}]}"),
     "spec.exclusionCalendars[0].name: must be a string, not a number"},
#define DATE_BAD(field, d)                                                                 \
    {EXCL("[{'fromDate':'2026-01-01'},{'fromDate':'2026-01-01','" field "':'" d "'}]"),    \
     XP "[1]." field ": \"" d "\" is not a valid date (YYYY-MM-DD, years 1970..9999)"}
    DATE_BAD("untilDate", "2026-02-29"), DATE_BAD("untilDate", "2026-02-30"),
    DATE_BAD("untilDate", "2026-04-31"), DATE_BAD("untilDate", "2026-13-01"),
    DATE_BAD("untilDate", "2026-00-10"), DATE_BAD("untilDate", "2026-01-00"),
    DATE_BAD("untilDate", "2026-1-01"), DATE_BAD("untilDate", "2026/01/02"),
    DATE_BAD("untilDate", "2026-01-02T00:00:00Z"), DATE_BAD("untilDate", "tomorrow"),
    DATE_BAD("untilDate", ""),
    {EXCL("[{'fromDate':'1969-12-31'}]"),
     XP "[0].fromDate: \"1969-12-31\" is not a valid date (YYYY-MM-DD, years 1970..9999)"},
    {EXCL("[{'fromDate':'2100-02-29'}]"),
     XP "[0].fromDate: \"2100-02-29\" is not a valid date (YYYY-MM-DD, years 1970..9999)"},
    {EXCL("[{'fromDate':'2026-03-01','untilDate':'2026-03-01'}]"),
     XP "[0].untilDate: \"2026-03-01\" must be after fromDate \"2026-03-01\" (untilDate is "
        "exclusive)"},
    {EXCL("[{'fromDate':'2026-03-01','untilDate':'2026-02-28'}]"),
     XP "[0].untilDate: \"2026-02-28\" must be after fromDate \"2026-03-01\" (untilDate is "
        "exclusive)"},
    {EXCL("[{'fromDate':'2026-03-01','untilDate':1}]"),
     XP "[0].untilDate: must be a string, not a number"},
    {EXCL("[{'fromDate':'2026-03-01','reason':false}]"),
     XP "[0].reason: must be a string, not a boolean"},
    /* minTimeLeft */
#define MTL(m) DOC("{'strategy':'MaintenanceSchedule','minTimeLeft':" m "}")
    {MTL("'2h'"), "spec.minTimeLeft: must be an object, not a string"},
    {MTL("{'controlplane':'2h'}"), "spec.minTimeLeft.controlplane: unknown field"},
    {MTL("{'controlPlane':7200}"), "spec.minTimeLeft.controlPlane: must be a string, not a number"},
    {MTL("{'controlPlane':'-2h'}"),
     "spec.minTimeLeft.controlPlane: \"-2h\" is not a valid duration (hours, minutes and "
     "seconds, e.g. 2h, 90m, 1h30m or 0s for none)"},
    {MTL("{'workerNodes':'2 hours'}"),
     "spec.minTimeLeft.workerNodes: \"2 hours\" is not a valid duration (hours, minutes and "
     "seconds, e.g. 2h, 90m, 1h30m or 0s for none)"},
    {MTL("{'workerNodes':'1.5h'}"),
     "spec.minTimeLeft.workerNodes: \"1.5h\" is not a valid duration (hours, minutes and "
     "seconds, e.g. 2h, 90m, 1h30m or 0s for none)"},
    {MTL("{'workerNodes':''}"),
     "spec.minTimeLeft.workerNodes: \"\" is not a valid duration (hours, minutes and "
     "seconds, e.g. 2h, 90m, 1h30m or 0s for none)"},
    {MTL("{'controlPlane':'30m2h'}"),
     "spec.minTimeLeft.controlPlane: \"30m2h\" is not a valid duration (hours, minutes and "
     "seconds, e.g. 2h, 90m, 1h30m or 0s for none)"},
    {MTL("{'controlPlane':'8761h'}"),
     "spec.minTimeLeft.controlPlane: \"8761h\" is longer than the maximum of 8760h"},
};

static void test_bad(void **state)
{
    const bad_case_t *c = *state;
    char err[POLICY_ERRLEN];
    json_t *doc = q(c->doc);
    policy_t *p = NULL;
    int rc;

    memset(err, 'x', sizeof err);
    rc = policy_parse(doc, NOW, &p, err, sizeof err);
    assert_int_equal(rc, HCP_EINVAL);
    assert_string_equal(err, c->message);
    /* A webhook gets the same words, split into field path and message. */
    {
        policy_problem_t pr;
        char joined[2 * POLICY_ERRLEN + 2];
        assert_int_equal(policy_validate(doc, NOW, &pr), HCP_EINVAL);
        assert_null(strstr(pr.field, " "));
        snprintf(joined, sizeof joined, "%s: %s", pr.field, pr.message);
        assert_string_equal(joined, c->message);
    }
    assert_non_null(p);
    assert_int_equal(p->valid, 0);
    assert_string_equal(p->message, c->message);
    /* An invalid policy never permits anything (fail safe). */
    {
        sched_t *s = policy_schedule(p);
        sched_interval_t iv;
        assert_int_equal(sched_permitted(s, NOW), 0);
        assert_int_equal(sched_next(s, NOW, &iv), 0);
        sched_unref(s);
    }
    policy_free(p);
    json_decref(doc);
}

/* Messages from the rrule gate are the engine's; the path is ours. */
static void test_bad_rrule(void **state)
{
    static const char *const rules[] = {"FREQ=DAILY;COUNT=3", "FREQ=HOURLY", "BYDAY=MO",
                                        "FREQ=DAILY;BYHOUR=3", "FREQ=WEEKLY;BYDAY=1MO",
                                        "garbage", "FREQ=DAILY;DTSTART=20260101T000000Z"};
    const char *prefix = "spec.maintenanceSchedule.permit.rrule: ";
    char err[POLICY_ERRLEN], doc[512];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        policy_t *p;
        json_t *j;
        snprintf(doc, sizeof doc, PERMIT("{'rrule':'%s'}"), rules[i]);
        j = q(doc);
        assert_int_equal(policy_parse(j, NOW, &p, err, sizeof err), HCP_EINVAL);
        assert_memory_equal(err, prefix, strlen(prefix));
        assert_true(strlen(err) > strlen(prefix) + 5);
        assert_int_equal(p->valid, 0);
        policy_free(p);
        json_decref(j);
    }
    /* and the COUNT message names COUNT */
    {
        policy_t *p;
        json_t *j = q(PERMIT("{'rrule':'FREQ=DAILY;COUNT=3'}"));
        assert_int_equal(policy_parse(j, NOW, &p, err, sizeof err), HCP_EINVAL);
        assert_non_null(strstr(err, "COUNT"));
        policy_free(p);
        json_decref(j);
    }
}

/* Limits that need generated input. */
static void test_bad_generated(void **state)
{
    char err[POLICY_ERRLEN];
    char *buf;
    size_t i, o;
    json_t *j;
    policy_t *p;

    (void)state;
    buf = malloc(80000);
    assert_non_null(buf);
    /* 254-character name */
    o = (size_t)snprintf(buf, 80000, "{'spec':{'strategy':'Permissive'},'metadata':{'name':'");
    for (i = 0; i < 254; i++)
        buf[o++] = 'a';
    snprintf(buf + o, 80000 - o, "'}}");
    j = q(buf);
    assert_int_equal(policy_parse(j, NOW, &p, err, sizeof err), HCP_EINVAL);
    assert_string_equal(err, "metadata.name: is longer than 253 characters");
    policy_free(p);
    json_decref(j);

    /* 1001 exclusions */
    o = (size_t)snprintf(buf, 80000,
                         "{'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':{"
                         "'exclude':[");
    for (i = 0; i < 1001; i++)
        o += (size_t)snprintf(buf + o, 80000 - o, "%s{'fromDate':'2026-01-01'}", i ? "," : "");
    snprintf(buf + o, 80000 - o, "]}}}");
    j = q(buf);
    assert_int_equal(policy_parse(j, NOW, &p, err, sizeof err), HCP_EINVAL);
    assert_string_equal(err,
                        "spec.maintenanceSchedule.exclude: has 1001 entries; at most 1000 are "
                        "supported");
    policy_free(p);
    json_decref(j);

    /* an exclusion reason over 1024 characters */
    o = (size_t)snprintf(buf, 80000,
                         "{'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':{"
                         "'exclude':[{'fromDate':'2026-01-01','reason':'");
    for (i = 0; i < 1025; i++)
        buf[o++] = 'r';
    snprintf(buf + o, 80000 - o, "'}]}}}");
    j = q(buf);
    assert_int_equal(policy_parse(j, NOW, &p, err, sizeof err), HCP_EINVAL);
    assert_string_equal(err,
                        "spec.maintenanceSchedule.exclude[0].reason: is longer than 1024 "
                        "characters");
    policy_free(p);
    json_decref(j);

    /* a long bad value is echoed cut after 64 bytes */
    o = (size_t)snprintf(buf, 80000, "{'spec':{'strategy':'");
    for (i = 0; i < 100; i++)
        buf[o++] = 'z';
    snprintf(buf + o, 80000 - o, "'}}");
    j = q(buf);
    assert_int_equal(policy_parse(j, NOW, &p, err, sizeof err), HCP_EINVAL);
    assert_string_equal(err, "spec.strategy: \"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
                             "zzzzzzzzzzzzzz...\" is not one of Permissive, Restrictive, "
                             "MaintenanceSchedule");
    policy_free(p);
    json_decref(j);
    free(buf);
}

/* An absent error buffer is allowed and the policy still says why. */
static void test_null_err(void **state)
{
    json_t *j = q(DOC("{'strategy':'Nope'}"));
    policy_t *p;

    (void)state;
    assert_int_equal(policy_parse(j, NOW, &p, NULL, 0), HCP_EINVAL);
    assert_string_equal(p->message, "spec.strategy: \"Nope\" is not one of Permissive, "
                                    "Restrictive, MaintenanceSchedule");
    /* metadata read before the error are kept for the status */
    assert_string_equal(p->name, "p");
    assert_string_equal(p->namespace_, "ns");
    assert_int_equal(p->generation, 3);
    policy_free(p);
    json_decref(j);
}

/* ---- recurrence => rrule ------------------------------------------------- */

typedef struct rule_case {
    const char *doc;   /* single-quoted JSON */
    const char *rrule; /* expected translation */
} rule_case_t;

static const rule_case_t RULES[] = {
    /* one of the dates exists (the 29th, in leap years): accepted */
    {REC("{'frequency':'Yearly','yearly':{'by':'Date','date':{'datesOfMonth':[29,30],"
         "'month':'February'}}}"),
     "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29,30"},
    /* repeated entries are normalised away, never an invalid policy */
    {REC("{'frequency':'Weekly','weekly':{'daysOfWeek':['Sunday','Saturday','Sunday']}}"),
     "FREQ=WEEKLY;INTERVAL=1;BYDAY=SU,SA;WKST=MO"},
    {REC("{'frequency':'Monthly','monthly':{'by':'Date','date':{'datesOfMonth':[5,31,5]}}}"),
     "FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=5,31"},
    {REC("{'frequency':'Monthly','monthly':{'by':'Day','day':{'days':["
         "{'weekOfMonth':'Last','dayOfWeek':'Friday'},{'weekOfMonth':'Last','dayOfWeek':'Friday'},"
         "{'weekOfMonth':'First','dayOfWeek':'Friday'}]}}}"),
     "FREQ=MONTHLY;INTERVAL=1;BYDAY=-1FR,1FR"},
    {REC("{'frequency':'Daily'}"), "FREQ=DAILY;INTERVAL=1"},
    {REC("{'frequency':'Daily','daily':{}}"), "FREQ=DAILY;INTERVAL=1"},
    {REC("{'frequency':'Daily','daily':{'interval':730}}"), "FREQ=DAILY;INTERVAL=730"},
    {REC("{'frequency':'Weekly','weekly':{'daysOfWeek':['Saturday','Sunday']}}"),
     "FREQ=WEEKLY;INTERVAL=1;BYDAY=SA,SU;WKST=MO"},
    {REC("{'frequency':'Weekly','weekly':{'daysOfWeek':['Monday','Tuesday','Wednesday',"
         "'Thursday','Friday','Saturday','Sunday'],'interval':26}}"),
     "FREQ=WEEKLY;INTERVAL=26;BYDAY=MO,TU,WE,TH,FR,SA,SU;WKST=MO"},
    {REC("{'frequency':'Monthly','monthly':{'by':'Date','date':{'datesOfMonth':[1,15,31],"
         "'interval':3}}}"),
     "FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=1,15,31"},
    {REC("{'frequency':'Monthly','monthly':{'by':'Date','date':{'datesOfMonth':[29]}}}"),
     "FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=29"},
    {REC("{'frequency':'Monthly','monthly':{'by':'Day','day':{'days':["
         "{'weekOfMonth':'First','dayOfWeek':'Monday'},{'weekOfMonth':'Second','dayOfWeek':'Tuesday'},"
         "{'weekOfMonth':'Third','dayOfWeek':'Wednesday'},{'weekOfMonth':'Fourth','dayOfWeek':'Thursday'},"
         "{'weekOfMonth':'Fifth','dayOfWeek':'Sunday'},{'weekOfMonth':'Last','dayOfWeek':'Friday'}],"
         "'interval':11}}}"),
     "FREQ=MONTHLY;INTERVAL=11;BYDAY=1MO,2TU,3WE,4TH,5SU,-1FR"},
    {REC("{'frequency':'Yearly','yearly':{'by':'Date','date':{'datesOfMonth':[29],"
         "'month':'February'}}}"),
     "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"},
    {REC("{'frequency':'Yearly','yearly':{'by':'Day','day':{'days':[{'weekOfMonth':'Fourth',"
         "'dayOfWeek':'Thursday'}],'month':'November'}}}"),
     "FREQ=YEARLY;BYMONTH=11;BYDAY=4TH"},
    {REC("{'frequency':'Yearly','yearly':{'by':'Day','day':{'days':[{'weekOfMonth':'Last',"
         "'dayOfWeek':'Sunday'}],'month':'December'}}}"),
     "FREQ=YEARLY;BYMONTH=12;BYDAY=-1SU"},
    {PERMIT("{'rrule':'FREQ=WEEKLY;BYDAY=SA,SU'}"), "FREQ=WEEKLY;BYDAY=SA,SU"},
};

static void test_rule(void **state)
{
    const rule_case_t *c = *state;
    char err[POLICY_ERRLEN];
    json_t *doc = q(c->doc);
    policy_t *p;

    assert_int_equal(policy_parse(doc, NOW, &p, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(p->valid, 1);
    assert_string_equal(p->message, "");
    assert_int_equal(p->has_permit, 1);
    assert_string_equal(p->rrule, c->rrule);
    policy_free(p);
    json_decref(doc);
}

/* ---- defaults, fields and timelines ------------------------------------ */

static policy_t *must_parse(const char *text)
{
    char err[POLICY_ERRLEN];
    json_t *doc = q(text);
    policy_t *p;

    if (policy_parse(doc, NOW, &p, err, sizeof err) != 0)
        fail_msg("unexpected validation error: %s", err);
    json_decref(doc);
    return p;
}

static void expect_next(sched_t *s, const char *from, const char *start, const char *end)
{
    sched_interval_t iv;
    char a[32], b[32];

    assert_int_equal(sched_next(s, tu_ts(from), &iv), 1);
    if (iv.start != tu_ts(start) || iv.end != tu_ts(end))
        fail_msg("next after %s: got [%s, %s), want [%s, %s)", from, tu_fmt(iv.start, a, 32),
                 tu_fmt(iv.end, b, 32), start, end);
}

static void test_defaults(void **state)
{
    policy_t *p = must_parse(MS("{'permit':{'rrule':'FREQ=DAILY'},"
                                "'exclude':[{'fromDate':'2026-02-28'}]}"));

    (void)state;
    assert_string_equal(p->name, "p");
    assert_string_equal(p->namespace_, "ns");
    assert_int_equal(p->generation, 3);
    assert_int_equal(p->strategy, POLICY_MAINTENANCE_SCHEDULE);
    assert_int_equal(p->has_schedule, 1);
    assert_string_equal(p->time_zone, "UTC");
    assert_int_equal(p->start_minute, 0);
    assert_int_equal(p->duration, 0);
    assert_int_equal(p->n_exclusions, 1);
    assert_int_equal(p->exclusions[0].from_day, tu_day("2026-02-28"));
    assert_int_equal(p->exclusions[0].until_day, tu_day("2026-03-01"));
    assert_string_equal(p->exclusions[0].reason, "");
    /* daily windows until midnight merge into one interval cut by the
     * one-day exclusion */
    /* the rule starts at its 1970-01-01 anchor */
    expect_next(p->sched, "2026-02-27T12:00Z", "1970-01-01", "2026-02-28");
    expect_next(p->sched, "2026-02-28", "2026-03-01", "+inf");
    policy_free(p);
}

static void test_fields(void **state)
{
    policy_t *p = must_parse(
        MS("{'timeZone':'Europe/Zurich','permit':{'recurrence':{'frequency':'Weekly',"
           "'weekly':{'daysOfWeek':['Saturday']}},'startTime':'22:30','duration':'1h30m'},"
           "'exclude':[{'fromDate':'2026-01-10','untilDate':'2026-01-12','reason':'Freeze'}]}"));

    (void)state;
    assert_string_equal(p->time_zone, "Europe/Zurich");
    assert_int_equal(p->start_minute, 22 * 60 + 30);
    assert_int_equal(p->duration, 90 * 60);
    assert_int_equal(p->exclusions[0].until_day, tu_day("2026-01-12"));
    assert_string_equal(p->exclusions[0].reason, "Freeze");
    /* Saturday 22:30 CET = 21:30Z; 2026-01-10 is excluded */
    expect_next(p->sched, "2026-01-01", "2026-01-03T21:30Z", "2026-01-03T23:00Z");
    expect_next(p->sched, "2026-01-04", "2026-01-17T21:30Z", "2026-01-17T23:00Z");
    assert_string_equal(sched_exclusion_reason(p->sched, tu_ts("2026-01-10T21:45Z")), "Freeze");
    policy_free(p);
}

static void test_durations(void **state)
{
    static const struct {
        const char *text;
        int32_t seconds;
    } cases[] = {{"8h", 8 * 3600}, {"90m", 90 * 60}, {"1h30m", 5400}, {"0h1m", 60},
                 {"8760h", 8760 * 3600}, {"525600m", 525600 * 60}, {"01h05m", 3900},
                 /* Go's time.Duration.String(), as metav1.Duration serialises */
                 {"8h0m0s", 8 * 3600}, {"1h30m0s", 5400}, {"45s", 45}, {"1m30s", 90},
                 {"0h0m1s", 1}, {"31536000s", 8760 * 3600}, {"8760h0m0s", 8760 * 3600},
                 {"2h0s", 7200}};
    char doc[512];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        policy_t *p;
        snprintf(doc, sizeof doc, PERMIT("{'rrule':'FREQ=DAILY','duration':'%s'}"),
                 cases[i].text);
        p = must_parse(doc);
        assert_int_equal(p->duration, cases[i].seconds);
        policy_free(p);
    }
}

/* spec.minTimeLeft: each key on its own, absent and "0s" meaning none. */
static void test_min_time_left(void **state)
{
    static const struct {
        const char *m;
        sched_time_t cp, workers;
    } cases[] = {{"{'controlPlane':'2h'}", 7200, 0},
                 {"{'workerNodes':'30m'}", 0, 1800},
                 {"{'controlPlane':'1h30m','workerNodes':'45s'}", 5400, 45},
                 {"{'controlPlane':'0s','workerNodes':'0h'}", 0, 0},
                 {"{'controlPlane':'8760h'}", 8760 * 3600LL, 0},
                 {"{}", 0, 0},
                 {"null", 0, 0}};
    char doc[512];

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(doc, sizeof doc, DOC("{'strategy':'Permissive','minTimeLeft':%s}"), cases[i].m);
        policy_t *p = must_parse(doc);
        assert_int_equal(p->min_left_cp, cases[i].cp);
        assert_int_equal(p->min_left_workers, cases[i].workers);
        policy_free(p);
    }
    policy_t *p = must_parse(DOC("{'strategy':'Permissive'}"));
    assert_int_equal(p->min_left_cp, 0);
    assert_int_equal(p->min_left_workers, 0);
    policy_free(p);
}

/* A permit without recurrence or rrule selects every date: startTime and
 * duration apply to each day, and only exclude constrains. */
static void test_permit_every_day(void **state)
{
    policy_t *p;

    (void)state;
    p = must_parse(MS("{'permit':{'startTime':'22:00','duration':'4h0m0s'},"
                      "'exclude':[{'fromDate':'2026-01-02','reason':'Freeze'}]}"));
    assert_string_equal(p->rrule, "FREQ=DAILY");
    assert_int_equal(p->duration, 4 * 3600);
    {
        policy_problem_t pr = {"unset", "unset"};
        json_t *doc = q(MS("{'permit':{'startTime':'22:00','duration':'4h0m0s'}}"));
        assert_int_equal(policy_validate(doc, NOW, &pr), 0);
        assert_string_equal(pr.field, "unset"); /* untouched when valid */
        json_decref(doc);
    }
    expect_next(p->sched, "2026-01-01T12:00Z", "2026-01-01T22:00Z", "2026-01-02T00:00Z");
    /* the 2nd is excluded: the window of the 1st is cut at midnight and the
     * window of the 2nd only keeps its part on the 3rd */
    expect_next(p->sched, "2026-01-02T01:00Z", "2026-01-03T00:00Z", "2026-01-03T02:00Z");
    policy_free(p);
    p = must_parse(MS("{'permit':{'recurrence':null,'rrule':null}}"));
    assert_string_equal(p->rrule, "FREQ=DAILY");
    expect_next(p->sched, "2026-01-01T12:00Z", "1970-01-01", "+inf");
    policy_free(p);
}

static void test_start_times(void **state)
{
    static const struct {
        const char *text;
        int minute;
    } cases[] = {{"00:00", 0}, {"23:59", 1439}, {"08:05", 485}, {"12:00", 720}};
    char doc[512];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        policy_t *p;
        snprintf(doc, sizeof doc, PERMIT("{'rrule':'FREQ=DAILY','startTime':'%s'}"),
                 cases[i].text);
        p = must_parse(doc);
        assert_int_equal(p->start_minute, cases[i].minute);
        policy_free(p);
    }
}

static void test_strategies(void **state)
{
    policy_t *p;
    sched_t *s;
    sched_interval_t iv;

    (void)state;
    p = must_parse(DOC("{'strategy':'Permissive'}"));
    s = policy_schedule(p);
    assert_int_equal(sched_containing(s, NOW, &iv), 1);
    assert_true(iv.start == SCHED_NEG_INF && iv.end == SCHED_POS_INF);
    assert_string_equal(policy_strategy_name(p->strategy), "Permissive");
    sched_unref(s);
    policy_free(p);

    p = must_parse(DOC("{'strategy':'Restrictive'}"));
    s = policy_schedule(p);
    assert_int_equal(sched_permitted(s, NOW), 0);
    assert_int_equal(sched_next(s, NOW, &iv), 0);
    assert_string_equal(policy_strategy_name(p->strategy), "Restrictive");
    sched_unref(s);
    policy_free(p);

    /* MaintenanceSchedule without a schedule never permits */
    p = must_parse(DOC("{'strategy':'MaintenanceSchedule'}"));
    assert_int_equal(p->has_schedule, 0);
    s = policy_schedule(p);
    assert_int_equal(sched_next(s, NOW, &iv), 0);
    sched_unref(s);
    policy_free(p);

    p = must_parse(DOC("{'strategy':'MaintenanceSchedule','maintenanceSchedule':null}"));
    assert_int_equal(sched_next(p->sched, NOW, &iv), 0);
    policy_free(p);

    /* a schedule next to Permissive is validated but has no effect */
    p = must_parse(DOC("{'strategy':'Permissive','maintenanceSchedule':{'permit':"
                       "{'rrule':'FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=1'}}}"));
    assert_int_equal(sched_permitted(p->sched, tu_ts("2026-06-01")), 1);
    policy_free(p);

    /* permit null, no exclusions: never (DESIGN 3.1 table) */
    p = must_parse(MS("{'permit':null}"));
    assert_int_equal(p->has_permit, 0);
    assert_null(p->rrule);
    assert_int_equal(sched_next(p->sched, NOW, &iv), 0);
    policy_free(p);

    /* permit null with an exclusion: everything outside it */
    p = must_parse(MS("{'exclude':[{'fromDate':'2026-03-01','untilDate':'2026-03-03',"
                      "'reason':'Migration'}]}"));
    assert_int_equal(sched_containing(p->sched, NOW, &iv), 1);
    assert_true(iv.start == SCHED_NEG_INF);
    assert_true(iv.end == tu_ts("2026-03-01"));
    expect_next(p->sched, "2026-03-02", "2026-03-03", "+inf");
    policy_free(p);

    assert_string_equal(policy_strategy_name(POLICY_MAINTENANCE_SCHEDULE), "MaintenanceSchedule");
}

/* exclude[].scope: each kind of change meets only the exclusions whose
 * scope holds it; the whole timeline meets them all; a scoped exclusion's
 * reason names its scope. */
static void test_exclusion_scopes(void **state)
{
    static const struct {
        const char *day;                    /* inside one exclusion */
        int permitted[POLICY_NCHANGES];     /* CP, CP minor, nodes, nodes minor */
        const char *reason;                 /* as the nodes-minor timeline quotes it */
    } cases[] = {
        {"2026-03-02T12:00:00Z", {0, 0, 0, 0}, "all"},
        {"2026-03-04T12:00:00Z", {1, 0, 1, 0}, "minor (scope MinorUpgrades)"},
        {"2026-03-06T12:00:00Z", {1, 1, 0, 0}, "(scope Nodes)"},
        {"2026-03-08T12:00:00Z", {1, 0, 0, 0}, "both (scope MinorUpgradesAndNodes)"},
        {"2026-03-10T12:00:00Z", {1, 1, 1, 1}, NULL},
    };
    policy_t *p;

    (void)state;
    p = must_parse(MS("{'permit':{" RULE "},'exclude':["
                      "{'fromDate':'2026-03-02','reason':'all','scope':'AllChanges'},"
                      "{'fromDate':'2026-03-04','reason':'minor','scope':'MinorUpgrades'},"
                      "{'fromDate':'2026-03-06','scope':'Nodes'},"
                      "{'fromDate':'2026-03-08','reason':'both','scope':'MinorUpgradesAndNodes'}]}"));
    assert_true(p->scoped);
    assert_int_equal(p->exclusions[0].scope, POLICY_SCOPE_ALL);
    assert_int_equal(p->exclusions[2].scope, POLICY_SCOPE_NODES);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sched_time_t t = tu_ts(cases[i].day);
        for (int c = 0; c < POLICY_NCHANGES; c++) {
            sched_t *s = policy_schedule_for(p, (policy_change_t)c);
            if (sched_permitted(s, t) != cases[i].permitted[c])
                fail_msg("%s, %s: permitted %d, want %d", cases[i].day,
                         policy_change_name((policy_change_t)c), sched_permitted(s, t),
                         cases[i].permitted[c]);
            sched_unref(s);
        }
        /* the whole timeline is the one every exclusion holds */
        assert_int_equal(sched_permitted(p->sched, t), cases[i].permitted[POLICY_CHANGE_NODES_MINOR]);
        const char *why = sched_exclusion_reason(p->sched, t);
        if (cases[i].reason)
            assert_string_equal(why, cases[i].reason);
        else
            assert_null(why);
    }
    /* the control-plane timeline quotes only what holds it */
    sched_t *s = policy_schedule_for(p, POLICY_CHANGE_CP_MINOR);
    assert_string_equal(sched_exclusion_reason(s, tu_ts("2026-03-08T12:00:00Z")),
                        "both (scope MinorUpgradesAndNodes)");
    assert_null(sched_exclusion_reason(s, tu_ts("2026-03-06T12:00:00Z")));
    sched_unref(s);
    policy_free(p);

    /* AllChanges only (written or not): one timeline for every kind */
    p = must_parse(MS("{'permit':{" RULE "},'exclude':[{'fromDate':'2026-03-02'},"
                      "{'fromDate':'2026-03-04','scope':'AllChanges'}]}"));
    assert_false(p->scoped);
    for (int c = 0; c < POLICY_NCHANGES; c++)
        assert_ptr_equal(p->sched_for[c], p->sched);
    policy_free(p);

    /* a scope on a policy that is not MaintenanceSchedule has no effect */
    p = must_parse(DOC("{'strategy':'Permissive','maintenanceSchedule':{'exclude':["
                       "{'fromDate':'2026-03-02','scope':'Nodes'}]}}"));
    assert_false(p->scoped);
    assert_int_equal(sched_permitted(p->sched_for[POLICY_CHANGE_NODES], tu_ts("2026-03-02T12:00:00Z")), 1);
    policy_free(p);

    /* the scope table itself */
    assert_true(policy_scope_covers(POLICY_SCOPE_ALL, POLICY_CHANGE_CP));
    assert_false(policy_scope_covers(POLICY_SCOPE_MINOR, POLICY_CHANGE_CP));
    assert_false(policy_scope_covers(POLICY_SCOPE_MINOR, POLICY_CHANGE_NODES));
    assert_false(policy_scope_covers(POLICY_SCOPE_NODES, POLICY_CHANGE_CP_MINOR));
    assert_false(policy_scope_covers(POLICY_SCOPE_MINOR_AND_NODES, POLICY_CHANGE_CP));
    for (int sc = 0; sc < POLICY_NSCOPES; sc++)
        assert_true(policy_scope_covers((policy_scope_t)sc, POLICY_CHANGE_NODES_MINOR));
}

/* The translated rules evaluate as the structured schema says. */
static void test_translated_windows(void **state)
{
    policy_t *p;

    (void)state;
    /* last Friday of each month */
    p = must_parse(REC("{'frequency':'Monthly','monthly':{'by':'Day','day':{'days':["
                       "{'weekOfMonth':'Last','dayOfWeek':'Friday'}]}}}"));
    expect_next(p->sched, "2026-01-01", "2026-01-30", "2026-01-31");
    expect_next(p->sched, "2026-01-31", "2026-02-27", "2026-02-28");
    policy_free(p);

    /* fifth Sunday: months without one select nothing */
    p = must_parse(REC("{'frequency':'Monthly','monthly':{'by':'Day','day':{'days':["
                       "{'weekOfMonth':'Fifth','dayOfWeek':'Sunday'}]}}}"));
    expect_next(p->sched, "2026-01-01", "2026-03-29", "2026-03-30");
    policy_free(p);

    /* February 29th: leap years only */
    p = must_parse(REC("{'frequency':'Yearly','yearly':{'by':'Date','date':{"
                       "'datesOfMonth':[29],'month':'February'}}}"));
    expect_next(p->sched, "2025-01-01", "2028-02-29", "2028-03-01");
    policy_free(p);

    /* Thanksgiving */
    p = must_parse(REC("{'frequency':'Yearly','yearly':{'by':'Day','day':{'days':["
                       "{'weekOfMonth':'Fourth','dayOfWeek':'Thursday'}],'month':'November'}}}"));
    expect_next(p->sched, "2026-01-01", "2026-11-26", "2026-11-27");
    policy_free(p);

    /* every third day from 1970-01-01 (day 0): 2026-01-01 is day 20454 = 3*6818 */
    p = must_parse(REC("{'frequency':'Daily','daily':{'interval':3}}"));
    expect_next(p->sched, "2026-01-01T01:00Z", "2026-01-01", "2026-01-02");
    expect_next(p->sched, "2026-01-02", "2026-01-04", "2026-01-05");
    policy_free(p);

    /* every second week, weeks counted from the one holding 1970-01-01
     * (Monday 1969-12-29); 2026-01-05 starts week 2923, which is odd */
    p = must_parse(REC("{'frequency':'Weekly','weekly':{'daysOfWeek':['Monday'],'interval':2}}"));
    expect_next(p->sched, "2026-01-05", "2026-01-12", "2026-01-13");
    policy_free(p);

    /* the 31st, every month: months without one select nothing */
    p = must_parse(REC("{'frequency':'Monthly','monthly':{'by':'Date','date':{"
                       "'datesOfMonth':[31]}}}"));
    expect_next(p->sched, "2026-02-01", "2026-03-31", "2026-04-01");
    policy_free(p);
}

static void test_is_hcmp(void **state)
{
    json_t *a = q("{'kind':'HostedChangeManagementPolicy'}");
    json_t *b = q("{'kind':'ConfigMap'}");
    json_t *c = q("[1]");
    json_t *d = q("{'kind':1}");

    (void)state;
    assert_true(policy_is_hcmp(a));
    assert_false(policy_is_hcmp(b));
    assert_false(policy_is_hcmp(c));
    assert_false(policy_is_hcmp(d));
    assert_false(policy_is_hcmp(NULL));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
}

/* A document without apiVersion/kind/metadata is accepted (preview of a
 * bare spec); null optional fields mean absent. */
static void test_minimal(void **state)
{
    policy_t *p = must_parse("{'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':{"
                             "'timeZone':null,'permit':{'rrule':'FREQ=DAILY','startTime':null,"
                             "'duration':null},'exclude':null}},'status':{'anything':1}}");

    (void)state;
    assert_string_equal(p->name, "");
    assert_string_equal(p->namespace_, "");
    assert_int_equal(p->generation, 0);
    assert_string_equal(p->time_zone, "UTC");
    assert_int_equal(p->n_exclusions, 0);
    policy_free(p);
    policy_free(NULL);
}

/* `test_policy --list-bad` prints each invalid case as a JSON line
 * {"doc": ..., "message": ...}: the e2e suite applies them to a real API
 * server and expects the controller's message from the webhook. */
static int list_bad(void)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char *s = strdup(BAD[i].doc);
        json_t *doc, *line;
        if (s == NULL)
            return 1;
        for (char *p = s; *p; p++)
            if (*p == '\'')
                *p = '"';
        doc = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        free(s);
        line = json_pack("{s:o*, s:s}", "doc", doc, "message", BAD[i].message);
        if (line == NULL || json_dumpf(line, stdout, JSON_COMPACT | JSON_ENCODE_ANY) != 0)
            return 1;
        putchar('\n');
        json_decref(line);
    }
    return 0;
}

int main(int argc, char **argv)
{
    size_t nb = sizeof BAD / sizeof BAD[0], nr = sizeof RULES / sizeof RULES[0], i, n = 0;
    const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_bad_rrule),       cmocka_unit_test(test_bad_generated),
        cmocka_unit_test(test_null_err),        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_fields),          cmocka_unit_test(test_durations),
        cmocka_unit_test(test_min_time_left),
        cmocka_unit_test(test_permit_every_day),
        cmocka_unit_test(test_start_times),     cmocka_unit_test(test_strategies),
        cmocka_unit_test(test_translated_windows), cmocka_unit_test(test_is_hcmp),
        cmocka_unit_test(test_exclusion_scopes),
        cmocka_unit_test(test_minimal),
    };
    size_t nf = sizeof fixed / sizeof fixed[0];
    struct CMUnitTest *tests = calloc(nb + nr + nf, sizeof *tests);
    int rc;

    if (argc == 2 && strcmp(argv[1], "--list-bad") == 0) {
        free(tests);
        return list_bad();
    }
    if (tests == NULL)
        return 1;
    for (i = 0; i < nb; i++) {
        tests[n].name = BAD[i].message;
        tests[n].test_func = test_bad;
        tests[n++].initial_state = (void *)&BAD[i];
    }
    for (i = 0; i < nr; i++) {
        tests[n].name = RULES[i].rrule;
        tests[n].test_func = test_rule;
        tests[n++].initial_state = (void *)&RULES[i];
    }
    for (i = 0; i < nf; i++)
        tests[n++] = fixed[i];
    rc = _cmocka_run_group_tests("policy", tests, n, NULL, NULL);
    free(tests);
    return rc;
}
