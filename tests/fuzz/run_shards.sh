#!/bin/sh
# Runs the differential fuzzer as N processes side by side, process I taking the programs whose
# index is I modulo N (KILN_FUZZ_SHARD=I/N), and sums up their results. Every other KILN_*
# variable (KILN_FUZZ_SEED, KILN_FUZZ_COUNT, KILN_CACHE_DIR, KILN_VALIDATE, ...) passes through
# to each process; they may share one cache directory (docs/cache.md).
#
#   tests/fuzz/run_shards.sh N LOG_DIR [BINARY]
#
# BINARY defaults to build/tests/fuzz/device_fuzz_differential_test. Each shard writes
# LOG_DIR/shard_I.log. Exits 0 when every shard passed.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 N LOG_DIR [BINARY]" >&2
  exit 2
fi
n=$1
logs=$2
bin=${3:-build/tests/fuzz/device_fuzz_differential_test}
mkdir -p "$logs"
pids=""
i=0
while [ "$i" -lt "$n" ]; do
  KILN_FUZZ_SHARD="$i/$n" "$bin" >"$logs/shard_$i.log" 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done
status=0
for p in $pids; do
  wait "$p" || status=1
done
grep -h "^differential fuzz: seed" "$logs"/shard_*.log
grep -h "^mismatch:" "$logs"/shard_*.log | sort -t' ' -k5,5n
echo "shards: $n, mismatching programs: $(grep -h -c '^mismatch:' "$logs"/shard_*.log |
  awk '{s += $1} END {print s}'), exit $status"
exit $status
