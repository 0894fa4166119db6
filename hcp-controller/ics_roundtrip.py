#!/usr/bin/python3
"""The exclusion calendar's round trip (DESIGN.md 3.16): the window events of
`hcp-controller preview -o ics` of a random policy A (e2e/controller/
ics_compare.py's, across DST zones), imported as the exclusion calendar of a
Permissive policy B, make B permitted exactly where A is not, to the second,
over a year.

  ics_roundtrip.py BIN DIR N SEED FROM

B's windows (preview -o json) are compared with the complement of A's
windows (preview -o json) inside [FROM, FROM + 365 days). Prints one line per
difference and a last line "N policies, W windows of A, E events imported,
D differences"; exits 1 if any.
"""
import datetime as dt
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e",
                                "controller"))
import ics_compare  # noqa: E402

YEAR = 365 * 86400


def utc(s):
    return int(dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=dt.timezone.utc).timestamp())


def preview(binary, path, frm, fmt, count):
    out = subprocess.run([binary, "preview", "-f", path, "--from", frm, "--count", str(count),
                          "-o", fmt], capture_output=True, check=False)
    if out.returncode != 0 or out.stderr:
        raise RuntimeError("preview %s: %s" % (path, out.stderr.decode().strip()))
    return out.stdout.decode()  # as written: CRLF stays CRLF


def windows(js, lo, hi):
    """The windows of preview's JSON clipped to [lo, hi)."""
    out = []
    for w in json.loads(js)["windows"]:
        s = utc(w["start"]) if w["start"] else lo
        e = utc(w["end"]) if w["end"] else hi
        s, e = max(s, lo), min(e, hi)
        if s < e:
            out.append((s, e))
    return out


def complement(ws, lo, hi):
    out, cur = [], lo
    for s, e in ws:
        if s > cur:
            out.append((cur, s))
        cur = max(cur, e)
    if cur < hi:
        out.append((cur, hi))
    return out


def window_events(ics):
    """The calendar with its window events only (preview's UIDs say which)."""
    head, rest = ics.split("BEGIN:VEVENT", 1)
    blocks = re.findall(r"BEGIN:VEVENT\r\n.*?END:VEVENT\r\n", "BEGIN:VEVENT" + rest, re.S)
    kept = [b for b in blocks if "\r\nUID:window-" in b]
    return head + "".join(kept) + "END:VCALENDAR\r\n", len(kept)


def main():
    binary, d, n, seed, frm = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
        sys.argv[5]
    r = random.Random(seed)
    lo = utc(frm)
    hi = lo + YEAR
    diffs = total_windows = total_events = 0
    for i in range(n):
        a = ics_compare.policy(r, i)
        pa = "%s/a%03d.json" % (d, i)
        with open(pa, "w") as f:
            json.dump(a, f)
        ws = windows(preview(binary, pa, frm, "json", 800), lo, hi)
        cal, events = window_events(preview(binary, pa, frm, "ics", 800))
        b = {"apiVersion": "changemanagement.hypershift.openshift.io/v1alpha1",
             "kind": "HostedChangeManagementPolicy",
             "metadata": {"name": "b%03d" % i, "namespace": "cal"},
             "spec": {"strategy": "Permissive",
                      "exclusionCalendars": [{"name": "a-windows"}]}}
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "a-windows", "namespace": "cal",
                           "labels": {"changemanagement.hypershift.openshift.io/"
                                      "exclusion-calendar": "true"}},
              "data": {"windows.ics": cal}}
        pb = "%s/b%03d.yaml" % (d, i)
        with open(pb, "w") as f:
            f.write("---\n%s\n---\n%s\n" % (json.dumps(b), json.dumps(cm)))
        got = windows(preview(binary, pb, frm, "json", 5000), lo, hi)
        want = complement(ws, lo, hi)
        total_windows += len(ws)
        total_events += events
        if got != want:
            diffs += 1
            first = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]),
                         min(len(got), len(want)))
            print("a%03d (%s): B has %d windows, the complement of A %d; first difference at "
                  "#%d: %s vs %s" % (i, a["spec"]["maintenanceSchedule"]["timeZone"], len(got),
                                      len(want), first, got[first:first + 1],
                                      want[first:first + 1]))
    print("%d policies, %d windows of A, %d events imported, %d differences" %
          (n, total_windows, total_events, diffs))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
