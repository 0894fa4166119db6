#include "policy/testutil_policy.h"

#include "base/buf.h"
#include "schedule/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *tu_json(const char *single_quoted)
{
    char *s = strdup(single_quoted);
    json_error_t je;
    json_t *doc;
    size_t i;

    if (s == NULL)
        abort();
    for (i = 0; s[i]; i++)
        if (s[i] == '\'')
            s[i] = '"';
    if ((doc = json_loads(s, 0, &je)) == NULL) {
        fprintf(stderr, "bad test JSON (%s): %s\n", je.text, s);
        abort();
    }
    free(s);
    return doc;
}

char *tu_busy_policy_json(int n_exclusions)
{
    static const char head[] =
        "{\"apiVersion\":\"changemanagement.hypershift.openshift.io/v1alpha1\","
        "\"kind\":\"HostedChangeManagementPolicy\",\"metadata\":{\"name\":\"busy\","
        "\"namespace\":\"clusters\"},\"spec\":{\"strategy\":\"MaintenanceSchedule\","
        "\"maintenanceSchedule\":{\"timeZone\":\"Europe/Berlin\",\"permit\":{"
        "\"rrule\":\"FREQ=DAILY\",\"startTime\":\"01:00\",\"duration\":\"6h\"},\"exclude\":[";
    char *buf = NULL, item[160];
    size_t len = 0, cap = 0;
    int i, y, m, d, y2, m2, d2;

    if (hcp_buf_append(&buf, &len, &cap, 1 << 16, head, strlen(head)))
        return NULL;
    for (i = 0; i < n_exclusions; i++) {
        int32_t from = sched_days_from_civil(2026, 11, 1) + i * 8;
        sched_civil_from_days(from, &y, &m, &d);
        sched_civil_from_days(from + 1 + i % 2, &y2, &m2, &d2);
        int n = snprintf(item, sizeof item,
                         "%s{\"fromDate\":\"%04d-%02d-%02d\",\"untilDate\":\"%04d-%02d-%02d\","
                         "\"reason\":\"change freeze %d\"}",
                         i ? "," : "", y, m, d, y2, m2, d2, i);
        if (hcp_buf_append(&buf, &len, &cap, 0, item, (size_t)n)) {
            free(buf);
            return NULL;
        }
    }
    if (hcp_buf_append(&buf, &len, &cap, 0, "]}}}", 4)) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *tu_ics_unfold(char *text)
{
    char *w = text;
    for (const char *r = text; *r; r++) {
        if (r[0] == '\r' && r[1] == '\n' && r[2] == ' ') {
            r += 2;
            continue;
        }
        *w++ = *r;
    }
    *w = '\0';
    return text;
}
