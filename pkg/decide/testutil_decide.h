#ifndef HCP_TESTUTIL_DECIDE_H
#define HCP_TESTUTIL_DECIDE_H

#include <jansson.h>

#include "schedule/schedule.h"

/* The document `text` parses to (the caller owns it); a test's own JSON
 * that does not parse stops the test binary, naming the error. */
json_t *tu_doc(const char *text);

/* The instant an RFC 3339 literal names; a bad literal stops the test
 * binary. */
sched_time_t tu_at(const char *rfc3339);

#endif
