#!/usr/bin/env bash
# The KernelBench corpus run (benchmarks/kb_bench.py over tests/problems/kb_corpus) as calls on
# every GPU of a device machine, from a tree frozen at one commit, so that the calls of several
# device sessions add up to one run (kb_bench keeps the rows and Inductor captures of one commit
# only, and the checkout moves on between sessions):
#
#   bash benchmarks/device/kb_corpus_calls.sh freeze SHA DIR        # here: DIR/tree = SHA's files
#   bash benchmarks/device/kb_corpus_calls.sh call DIR OUT [PREV ...]   # on the device machine
#
# `call` runs kb_bench in DIR/tree with WORKBENCH_COMMIT set to the frozen commit, resumes from
# the rows, captures and searches in flight of earlier calls (PREV: their OUT folders, copied
# back under DIR, oldest first), starts no problem after KB_BUDGET_S seconds (default 490) and
# at KB_CARRY_S (default 530; a device call may run 600 s) saves the searches still in flight
# for the next call and ends (rows are written as problems finish). Several searches run at
# once per GPU (KB_CONCURRENT, default 6), so that one's compile and check overlap another's
# timing; the GPUs' utilisation, sampled every 5 s, ends kb.log. KB_ARGS adds
# kb_bench options (a smoke on the CPU: KB_ARGS="--cpu --limit 1 --budget 2"), PYTHON the
# interpreter (default python3, the device image's). When every problem
# has a row: python benchmarks/kb_bench.py --summarize DIR/c*/kb-rows.jsonl
set -u
case "${1:-}" in
freeze)
  sha=$(git rev-parse --verify "$2^{commit}") || exit 2
  # What kb_bench does not read stays out, so that the tree and the calls' outputs fit the 64 MiB a
  # device call carries.
  mkdir -p "$3/tree" && git archive "$sha" -- . ':(exclude)docs' ':(exclude)notebooks' \
    ':(exclude)kernels_cache/landscapes' ':(exclude)benchmarks/results' ':(exclude)benchmarks/device/runs' \
    | tar -x -C "$3/tree" && echo "$sha" > "$3/tree/.commit"
  echo "$3/tree: $sha"
  ;;
call)
  frozen=$2; out=$3; shift 3
  sha=$(cat "$frozen/tree/.commit" 2>/dev/null || true)
  if [ -z "$sha" ]; then echo "no $frozen/tree/.commit: make the tree with '$0 freeze SHA $frozen'" >&2; exit 2; fi
  resume=()
  for d in "$@"; do
    [ -f "$d/kb-rows.jsonl" ] && resume+=(--resume "$(realpath "$d/kb-rows.jsonl")")
  done
  out=$(realpath "$out")
  cd "$frozen/tree" || exit 2
  export WORKBENCH_COMMIT=$sha PYTHONUNBUFFERED=1 PYTHONPATH=.
  util=""
  if command -v nvidia-smi > /dev/null; then
    util=$(mktemp)
    nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -l 5 > "$util" 2>/dev/null &
    smi=$!
  fi
  timeout 585 "${PYTHON:-python3}" benchmarks/kb_bench.py tests/problems/kb_corpus --out "$out" --budget 32 \
    --workers 15 --concurrent "${KB_CONCURRENT:-6}" --time-budget-s "${KB_BUDGET_S:-490}" \
    --carry-at-s "${KB_CARRY_S:-530}" ${resume[@]:+"${resume[@]}"} ${KB_ARGS:-} > "$out/kb.log" 2>&1
  rc=$?
  if [ -n "$util" ]; then
    kill "$smi" 2> /dev/null
    awk -F', ' '{n[$1]++; s[$1]+=$2} END {for (g in n) printf "gpu%s utilisation: mean %.0f%% over %d samples (5 s)\n", g, s[g]/n[g], n[g]}' "$util" >> "$out/kb.log"
  fi
  echo "kb_bench exit $rc"
  grep -E "problems, |rows;|no summary|wrote|in flight saved|utilisation" "$out/kb.log" | tail -n 8
  ;;
*)
  echo "usage: $0 freeze SHA DIR | call DIR OUT [PREV_OUT ...]" >&2; exit 2
  ;;
esac
