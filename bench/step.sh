#!/usr/bin/env bash
# One step of `make bench`: prints which step of how many runs, what it runs and how long it
# usually takes, runs it, and says how long it took. A failing step stops the run.
# usage: bench/step.sh I/N "about 3 min" command [args...]
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: step.sh I/N DURATION command [args...]" >&2; exit 2; }
step=$1 usual=$2; shift 2
printf '\n== bench step %s (%s, started %s): %s\n' "$step" "$usual" "$(date -u +%H:%M:%S)" "$*"
start=$(date +%s)
"$@"
printf '== bench step %s done in %ss\n' "$step" "$(($(date +%s) - start))"
