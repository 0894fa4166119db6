/* testutil_policy: helpers for the policy module's tests. */
#ifndef HCP_POLICY_TESTUTIL_POLICY_H
#define HCP_POLICY_TESTUTIL_POLICY_H

#include <jansson.h>

/* Parses test JSON written with single quotes (each becomes a double
 * quote) into a new value; aborts the test program with the parser's
 * message when it is not JSON. */
json_t *tu_json(const char *single_quoted);

/* The JSON text of policy clusters/busy (new, the caller frees it; NULL
 * when out of memory): daily windows 01:00-07:00 in Europe/Berlin and
 * n exclusions of one or two days every eight days from 2026-11-01, the
 * size of policy a webhook's worst case is measured with. */
char *tu_busy_policy_json(int n);

/* An iCalendar text with its folded lines joined (RFC 5545 3.1: each
 * "\r\n " removed), in place; returns text. */
char *tu_ics_unfold(char *text);

#endif
