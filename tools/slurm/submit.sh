#!/usr/bin/env bash
# Shard one suite over a GPU cluster and merge: a job array of N shards, then the merge once all
# of them have ended (afterany: a failed shard still leaves the others' records to merge).
#
#   tools/slurm/submit.sh N [WORKLOADS...]        e.g. tools/slurm/submit.sh 8 workloads/{seed,seq-sweep,shapes}.json
#   (the default suite; workloads/ as a whole adds long-seq.json, 2^31-2^32 elements a tensor)
#
# Extra sbatch options (partition, account) go in SBATCH_ARGS; the environment of
# shard_suite.sbatch and merge.sbatch (MTABENCH, SHARDS_DIR, RUN_ARGS, OUT) passes through.
set -euo pipefail
n=${1:?usage: submit.sh N [WORKLOADS...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
read -r -a sbatch_args <<< "${SBATCH_ARGS:-}"
array=$(sbatch --parsable "${sbatch_args[@]}" --array="0-$((n - 1))" "$here/shard_suite.sbatch" "$@")
array=${array%%;*}
merge=$(sbatch --parsable "${sbatch_args[@]}" --dependency="afterany:$array" "$here/merge.sbatch")
echo "shards: job array $array ($n tasks); merge: job ${merge%%;*}"
