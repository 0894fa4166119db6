# Reading the Containerfile: its instructions, stages and the packages each
# stage installs. Sourced by hcp-controller/test_image.sh (which checks the
# Containerfile against the binary) and by the image build and test under
# e2e/image/, so that what they install is what the Containerfile says.
# shellcheck shell=bash

# logical FILE: its instructions one per line: comments dropped,
# continuation lines joined.
logical() {
  awk '
    /^[ \t]*#/ { next }
    { line = line $0 }
    /\\[ \t]*$/ { sub(/\\[ \t]*$/, " ", line); next }
    { if (line ~ /[^ \t]/) print line; line = "" }
    END { if (line ~ /[^ \t]/) print line }' "$1"
}

# stage FILE NAME: the instructions of the stage `FROM ... AS NAME`.
stage() {
  logical "$1" | awk -v name="$2" '
    toupper($1) == "FROM" { on = (tolower($NF) == tolower(name) && toupper($(NF-1)) == "AS") }
    on'
}

# stages FILE: the image and name of every stage, "IMAGE NAME" per line.
stages() {
  logical "$1" | awk 'toupper($1) == "FROM" {
    img = ""; for (i = 2; i <= NF; i++) if ($i !~ /^--/) { img = $i; break }
    print img, (toupper($(NF-1)) == "AS" ? $NF : "-") }'
}

# apt_packages: the package names of every `apt-get install` in the
# instructions on standard input, one per line.
apt_packages() {
  awk '{
    for (i = 1; i <= NF; i++) {
      if ($i == "apt-get" && $(i+1) == "install") {
        for (j = i + 2; j <= NF; j++) {
          if ($j == "&&" || $j == ";" || $j == "||" || $j ~ /;$/) break
          if ($j !~ /^-/) print $j
        }
      }
    }
  }'
}

# instruction KEYWORD: the arguments of every KEYWORD instruction (RUN, USER,
# ENTRYPOINT, ...) among the instructions on standard input, one per line.
instruction() {
  awk -v kw="$1" 'toupper($1) == toupper(kw) { sub(/^[ \t]*[^ \t]+[ \t]+/, ""); print }'
}

# chart_app_version CHART_YAML: the chart's appVersion, the tag of the image
# the chart deploys when image.tag is empty.
chart_app_version() {
  sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$1"
}
