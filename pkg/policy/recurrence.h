/*
 * policy/recurrence.h - the recurrence form of a permit.
 *
 * A policy's permit says when changes are allowed either as an rrule or as
 * a structured `recurrence` (frequency daily/weekly/monthly/yearly with
 * days of the week, dates of the month, "second Tuesday" and intervals),
 * which people find easier to write and review. The structured form is
 * validated field by field and translated into the rrule subset the engine
 * accepts (DESIGN.md 3.2); the parser then checks the translation like a
 * written rule.
 */
#ifndef HCP_POLICY_RECURRENCE_H
#define HCP_POLICY_RECURRENCE_H

#include <jansson.h>

#include "base/error.h"

#define POLICY_RRULE_MAX 512 /* longest rrule accepted or produced, with the NUL */

/*
 * Translates rec (the permit.recurrence object found at path; borrowed)
 * into an rrule written to out, which has room for POLICY_RRULE_MAX bytes.
 * Returns 0, or HCP_EINVAL with err naming the offending field (also when
 * the translation would be longer than POLICY_RRULE_MAX - 1).
 */
int policy_recurrence_rrule(const json_t *rec, const char *path, char *out, char *err,
                            size_t errlen);

#endif
