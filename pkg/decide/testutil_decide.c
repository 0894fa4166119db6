#include "decide/testutil_decide.h"

#include <stdio.h>
#include <stdlib.h>

json_t *tu_doc(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);

    if (j == NULL) {
        fprintf(stderr, "bad test JSON (%s): %s\n", e.text, text);
        abort();
    }
    return j;
}

sched_time_t tu_at(const char *rfc3339)
{
    sched_time_t t;

    if (sched_parse_rfc3339(rfc3339, &t) != 0) {
        fprintf(stderr, "bad test instant: %s\n", rfc3339);
        abort();
    }
    return t;
}
