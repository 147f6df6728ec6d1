#!/usr/bin/env bash
# The integrity benchmark's parts on a machine of two GPUs, one list of parts per GPU, side by
# side (run from the repository root with PYTHONPATH=. and WORKBENCH_COMMIT set):
#
#   bash benchmarks/device/integrity_two_gpus.sh OUT BUDGET_S BEFORE [RESUME_DIR ...]
#
# First the probes on GPU 0 alone (their attacks burn CPU and GPU: an honest lane beside them
# had a kernel flagged under the roofline floor). Then GPU 0: throughput (previous executor at
# BEFORE beside this one), zoo shard 2 of 3; GPU 1: zoo shards 0 and 1 of 3, the 200 landscape
# points. Parts already complete under a
# RESUME_DIR are skipped; partial zoo and landscape parts resume. Each GPU's files go to
# OUT/g0 and OUT/g1, logs to OUT/g0.log and OUT/g1.log; `integrity_bench.py --merge` takes
# the directories of every call.
set -u
out=$1; budget=$2; before=$3; shift 3
resume=("$@")
start=$(date +%s)

lane() {  # lane GPU DIR PART...
  local gpu=$1 dir=$2; shift 2
  mkdir -p "$dir"
  for part in "$@"; do
    local stage=${part%%@*} shard=0/1
    [[ $part == *@* ]] && shard=${part#*@}
    local name=$stage
    [[ $stage == zoo ]] && name="zoo-${shard/\//of}"
    if compgen -G "$dir/integrity-$name.json" >/dev/null; then continue; fi
    local done=0
    for r in "${resume[@]}"; do
      if [ -n "$(find "$r" -name "integrity-$name.json" 2>/dev/null | head -1)" ]; then done=1; fi
    done
    [ $done = 1 ] && { echo "[lane $gpu] $name: done before"; continue; }
    local left=$(( budget - ($(date +%s) - start) ))
    if [ $left -lt 60 ]; then echo "[lane $gpu] $name: not started ($left s left)"; continue; fi
    echo "[lane $gpu] $name: running ($left s left)"
    timeout $((left + 20)) python3 benchmarks/integrity_bench.py --stage "$stage" \
      --shard "$shard" --gpu "$gpu" --budget-s "$left" --before "$before" --out "$dir" \
      ${resume[@]:+--resume "${resume[@]}"}
  done
}

lane 0 "$out/g0" probes > "$out/g0.log" 2>&1
lane 0 "$out/g0" throughput zoo@2/3 >> "$out/g0.log" 2>&1 &
lane 1 "$out/g1" zoo@0/3 zoo@1/3 landscape > "$out/g1.log" 2>&1 &
wait
tail -n 3 "$out/g0.log" "$out/g1.log"
