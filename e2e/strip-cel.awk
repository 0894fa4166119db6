#!/usr/bin/awk -f
# Prints a CRD manifest without its `x-kubernetes-validations` blocks (CEL
# rules), for API servers older than 1.25 that do not know the field. Works on
# block-style YAML as written in crds/: the key line and every following line
# indented deeper than it (or a `- ` item at the same indent) are dropped.

function indent(s) { match(s, /^ */); return RLENGTH }

{
  if (skipping) {
    if ($0 ~ /^[ \t]*$/) next
    n = indent($0)
    if (n > skip_indent) next
    if (n == skip_indent && substr($0, n + 1, 2) == "- ") next
    skipping = 0
  }
  if ($0 ~ /^ *x-kubernetes-validations:/) {
    skipping = 1
    skip_indent = indent($0)
    next
  }
  print
}
