/* tz.c: local time <-> UTC in IANA zones. */
#include "schedule/tz.h"

#include "schedule/civil.h"
#include "schedule/tzfile.h"

#include <stdio.h>
#include <string.h>

static int valid_zone_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64 || strstr(name, "..") || name[0] == '/')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '/' || c == '_' || c == '-' || c == '+'))
            return 0;
    }
    return 1;
}

int sched_zone_lookup(const char *name, sched_zone_t *zone)
{
    if (!name || !*name || strcmp(name, "UTC") == 0 || strcmp(name, "Etc/UTC") == 0) {
        *zone = NULL;
        return 0;
    }
    if (!valid_zone_name(name))
        return HCP_EINVAL;
    const sched_tzdata_t *z;
    if (sched_tzfile_load(name, &z) != 0)
        return HCP_EINVAL;
    *zone = (sched_zone_t)z;
    return 0;
}

int sched_zone_offset(sched_zone_t zone, sched_time_t t)
{
    if (!zone)
        return 0;
    return sched_tzfile_offset((const sched_tzdata_t *)zone, t);
}

sched_time_t sched_zone_local_to_utc(sched_zone_t zone, int32_t day, int second_of_day)
{
    sched_time_t local = (sched_time_t)day * 86400 + second_of_day;
    if (!zone)
        return local;
    /* The UTC instant lies within 18 hours of the wall-clock reading; the
     * offsets in force at both ends bracket the (at most one) transition. */
    int before = sched_zone_offset(zone, local - 18 * 3600);
    int after = sched_zone_offset(zone, local + 18 * 3600);
    /* One offset at both ends (nearly always): whether or not it is valid
     * at local - before, every branch below answers local - before. */
    if (before == after)
        return local - before;
    int ok_before = sched_zone_offset(zone, local - before) == before;
    int ok_after = sched_zone_offset(zone, local - after) == after;
    if (ok_before && ok_after) {
        /* Ambiguous (fall-back): the first occurrence is the earlier instant. */
        sched_time_t a = local - before, b = local - after;
        return a < b ? a : b;
    }
    if (ok_after)
        return local - after;
    /* Valid only with the earlier offset, or in a gap (spring-forward): the
     * offset in force before the gap. */
    return local - before;
}

int sched_local_to_utc(const char *tz, int32_t day, int minute_of_day, sched_time_t *t)
{
    sched_zone_t zone;
    if (sched_zone_lookup(tz, &zone))
        return HCP_EINVAL;
    *t = sched_zone_local_to_utc(zone, day, minute_of_day * 60);
    return 0;
}

int sched_utc_to_local(const char *tz, sched_time_t t, int32_t *day, int *second_of_day,
                       int *utc_offset)
{
    sched_zone_t zone;
    if (sched_zone_lookup(tz, &zone))
        return HCP_EINVAL;
    int off = sched_zone_offset(zone, t);
    sched_time_t local = t + off;
    int64_t d = sched_floor_div(local, 86400);
    if (day)
        *day = (int32_t)d;
    if (second_of_day)
        *second_of_day = (int)(local - d * 86400);
    if (utc_offset)
        *utc_offset = off;
    return 0;
}
