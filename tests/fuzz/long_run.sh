#!/bin/sh
# The long differential run in resumable chunks: programs 0 .. TOTAL-1 of seed KILN_FUZZ_SEED
# (default 1), CHUNK programs at a time, each chunk as N shards (run_shards.sh). A chunk that
# passed leaves LOG_DIR/chunk_K/passed and is skipped when the script is started again, so a
# stopped run resumes where it was. Prints one summary line per chunk and a total at the end;
# exits 0 only when every chunk passed. KILN_FUZZ_FROM=K starts at the chunk holding program K
# (the chunks before it are left for a later start). Other KILN_* variables pass through.
#
#   tests/fuzz/long_run.sh TOTAL CHUNK N LOG_DIR [BINARY]
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 TOTAL CHUNK N LOG_DIR [BINARY]" >&2
  exit 2
fi
total=$1
chunk=$2
n=$3
logs=$4
bin=${5:-build/tests/fuzz/device_fuzz_differential_test}
here=$(dirname "$0")
mkdir -p "$logs"
status=0
first=$(( ${KILN_FUZZ_FROM:-0} / chunk * chunk ))
start=$(date +%s)
while [ "$first" -lt "$total" ]; do
  count=$chunk
  if [ $((first + count)) -gt "$total" ]; then count=$((total - first)); fi
  dir="$logs/chunk_$first"
  if [ ! -e "$dir/passed" ]; then
    t0=$(date +%s)
    if KILN_FUZZ_FIRST=$first KILN_FUZZ_COUNT=$count "$here/run_shards.sh" "$n" "$dir" "$bin" \
      >"$dir.summary" 2>&1; then
      touch "$dir/passed"
    else
      status=1
    fi
    echo "chunk $first..$((first + count - 1)): $(tail -n 1 "$dir.summary"), $(($(date +%s) - t0)) s"
  fi
  first=$((first + count))
done
passed=$(ls "$logs"/chunk_*/passed 2>/dev/null | wc -l)
echo "long run: $total programs in chunks of $chunk, $passed chunks passed," \
  "mismatching programs: $(cat "$logs"/chunk_*/shard_*.log | grep -c '^mismatch:')," \
  "$(($(date +%s) - start)) s this start, exit $status"
exit $status
