/* testutil_policy: helpers for the policy module's tests. */
#ifndef HCP_POLICY_TESTUTIL_POLICY_H
#define HCP_POLICY_TESTUTIL_POLICY_H

#include <jansson.h>

/* Parses test JSON written with single quotes (each becomes a double
 * quote) into a new value; aborts the test program with the parser's
 * message when it is not JSON. */
json_t *tu_json(const char *single_quoted);

#endif
