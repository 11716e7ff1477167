#!/usr/bin/env bash
# Evolves one module on many hosts with a Slurm job array (docs/evolution.md, "Many hosts:
# shards and Slurm"). Submits two jobs:
#   * an array of EVO_SHARDS elements; element i runs evo-opt on its share of the tasks (evo-evolve
#     takes shard i/N from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT) into RUN_BASE/shard-i,
#     its output module (its own functions evolved) in RUN_BASE/shard-i.mlir;
#   * a job that starts once every element succeeded (--dependency=afterok): it merges the shards
#     with `evo-opt runs-merge` into RUN_BASE/merged and applies the merged run (resume=true) to
#     write OUT.mlir. That needs no GPU when every function was evolved whole by one shard;
#     runs-merge says when a function had to be split (then give the merge job a GPU).
# Slurm schedules, retries and places everything: this script only submits.
#
# usage: scripts/evo-slurm-array.sh IN.mlir RUN_BASE OUT.mlir "EVOLVE_OPTIONS"
#   e.g. scripts/evo-slurm-array.sh model.mlir /shared/runs/model model.evolved.mlir \
#          "max-candidates=200 time-budget=60 seed=1"
# EVOLVE_OPTIONS are evo-evolve's options without run-dir, resume and shard (the script sets
# them); the same ones for every shard and for the apply (resume checks they match).
#
# Environment (optional):
#   EVO_SHARDS=N             array elements, i.e. shards (default 4)
#   EVO_OPT=PATH             evo-opt (default: evo-opt on PATH, else build/bin/evo-opt of this tree)
#   EVO_LOWER_OPTIONS="..."  options of --evo-lower-to-gpu (default: none)
#   EVO_SBATCH_SHARD="..."   more sbatch options for each element, split on spaces
#                            (e.g. "-p gpu --gres=gpu:1 --time=04:00:00")
#   EVO_SBATCH_MERGE="..."   more sbatch options for the merge job (e.g. "-p cpu --time=00:30:00")
# RUN_BASE must be on a file system every node sees, one where SQLite's WAL works (the run
# store needs it; not every NFS does). Logs: RUN_BASE/logs/shard-<i>.log and merge.log. An
# element that Slurm requeues resumes its shard's run; a failed element leaves the merge job
# cancelled (--kill-on-invalid-dep): fix the cause and submit again, the finished shards resume
# at once.
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# The inside of the jobs: evo-opt with the options it was submitted with.
lower_flag() {
  if [ -n "$1" ]; then printf -- '--evo-lower-to-gpu=%s' "$1"; else printf -- '--evo-lower-to-gpu'; fi
}

if [ "${1:-}" = "--shard" ]; then
  evo=$2 in=$3 base=$4 opts=$5 lower=$6
  : "${SLURM_ARRAY_TASK_ID:?evo-slurm-array: --shard runs as an element of a Slurm job array}"
  dir="$base/shard-$SLURM_ARRAY_TASK_ID"
  resume=false
  [ -e "$dir/run.sqlite" ] && resume=true # requeued, or submitted again: continue the run
  echo "evo-slurm-array: shard $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT on $(hostname), run-dir $dir (resume=$resume)"
  exec "$evo" "$in" "$(lower_flag "$lower")" \
    --evo-evolve="$opts run-dir=$dir resume=$resume" -o "$dir.mlir"
fi

if [ "${1:-}" = "--merge" ]; then
  evo=$2 in=$3 base=$4 out=$5 opts=$6 lower=$7 shards=$8
  runs=()
  for ((i = 0; i < shards; i++)); do runs+=("$base/shard-$i"); done
  echo "evo-slurm-array: merging ${shards} shards on $(hostname)"
  "$evo" runs-merge "$base/merged" "${runs[@]}"
  # shard=all: the merged run is not a shard, whatever the environment says.
  exec "$evo" "$in" "$(lower_flag "$lower")" \
    --evo-evolve="$opts run-dir=$base/merged resume=true shard=all" -o "$out"
fi

[ $# -eq 4 ] || usage
case "$1" in -*) usage ;; esac
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
in=$(absolute "$1") base=$(absolute "$2") out=$(absolute "$3") opts=$4
shards=${EVO_SHARDS:-4}
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "evo-slurm-array: EVO_SHARDS must be a positive number, got '$shards'" >&2; exit 2; }
case " $opts " in
  *" run-dir="* | *" resume="* | *" shard="*)
    echo "evo-slurm-array: EVOLVE_OPTIONS must not set run-dir, resume or shard (the script does)" >&2
    exit 2 ;;
esac
[ -f "$in" ] || { echo "evo-slurm-array: no input '$in'" >&2; exit 2; }
self=$(readlink -f "$0")
evo=${EVO_OPT:-$(command -v evo-opt || echo "$(dirname "$self")/../build/bin/evo-opt")}
evo=$(absolute "$evo")
[ -x "$evo" ] || { echo "evo-slurm-array: no evo-opt at '$evo' (set EVO_OPT)" >&2; exit 2; }
if [ -e "$base/merged" ]; then
  echo "evo-slurm-array: '$base/merged' exists (an earlier merge); choose another RUN_BASE or remove it" >&2
  exit 2
fi
mkdir -p "$base/logs"

# shellcheck disable=SC2086 # the extra sbatch options are split on spaces on purpose
array=$(sbatch --parsable --array="0-$((shards - 1))" --job-name=evo-shard \
  --output="$base/logs/shard-%a.log" ${EVO_SBATCH_SHARD:-} \
  "$self" --shard "$evo" "$in" "$base" "$opts" "${EVO_LOWER_OPTIONS:-}")
array=${array%%;*} # --parsable prints "jobid[;cluster]"
# shellcheck disable=SC2086
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --job-name=evo-merge --output="$base/logs/merge.log" ${EVO_SBATCH_MERGE:-} \
  "$self" --merge "$evo" "$in" "$base" "$out" "$opts" "${EVO_LOWER_OPTIONS:-}" "$shards")
merge=${merge%%;*}
echo "evo-slurm-array: submitted array job $array ($shards shards into $base/shard-*) and merge job $merge (afterok:$array, writes $out); logs in $base/logs"
