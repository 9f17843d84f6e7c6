#!/bin/bash
# First-start timeline on a fresh clone (issue 12): clone -> `carenav build --background` (fee schedule, program
# corpus; rule text indexing in the background) -> first valuation answer -> rule text complete.
# Packages must already be installed (the pip step is not timed). Usage, from the repository folder:
#   CARENAV_MIRROR=$(realpath ../shared/data) bash bench/first_start.sh [/tmp/first-start]
set -u
repo=$(pwd); where=${1:-/tmp/first-start}
: "${CARENAV_MIRROR:?set CARENAV_MIRROR to an absolute path of the mirror (like ../shared/data)}"
rm -rf "$where"
start=$(date +%s.%N)
stamp() { echo "$(python3 -c "print(f'{$(date +%s.%N) - $start:7.1f}')") s  $*"; }
git clone -q "$repo" "$where" && stamp "cloned"
cd "$where"
export PYTHONPATH="$where"
python -m carenav_core build --background > build.out 2>&1
stamp "build --background returned: $(grep -E 'fee schedule|rule text' build.out | tr '\n' ' ')"
python -m carenav_core ask "What is APCM and how is it valued?" > ask.out 2> ask.err
stamp "first valuation answer (exit $?): $(grep -c 'PFS CY' ask.out) lines citing fee-schedule rows"
while true; do
  out=$(python -m carenav_core index --status 2>/dev/null | tail -1)
  stamp "$out"
  case "$out" in *complete*) break;; esac
  sleep 60
done
