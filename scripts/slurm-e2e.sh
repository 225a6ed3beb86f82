#!/usr/bin/env bash
# End-to-end test of the Slurm recipe of docs/scale.md on a real Slurm:
# installs Debian's slurm-wlm and munge if missing, starts a single-node
# cluster (munged, slurmctld, slurmd) in a scratch directory, submits the
# documented job array (docs/scale/slurm-shards.sh) for a multi-seed
# comparison and for a sweep, merges each with the documented dependent
# job (docs/scale/slurm-merge.sh), and checks that each merged output is
# byte for byte the unsharded command's; then runs two shards of the
# comparison again (--array=1,3 --shards 4) and merges again. Every daemon
# it started is stopped by its PID on exit.
#
# Needs root (apt-get, munged's and Slurm's directories). Skips, with a
# message, only when the packages cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$(date +%s)

skip() { echo "SKIP the Slurm end-to-end test: $*"; exit 0; }

need=()
for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || need=(slurm-wlm munge)
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    skip "Slurm is not installed, and installing it needs root and apt-get"
  fi
  echo "installing ${need[*]} from Debian"
  aptInstall() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; }
  # With the package lists there are, or, failing that, fresh ones.
  if ! { aptInstall || { apt-get update -qq && aptInstall; }; } >/tmp/slurm-e2e-apt.log 2>&1; then
    tail -n 20 /tmp/slurm-e2e-apt.log
    skip "apt-get could not install ${need[*]} (above)"
  fi
fi
# Installing the packages may start their services where there is an
# init system; this test runs its own daemons, with its own files.

work=$(mktemp -d /tmp/slurm-e2e.XXXXXX)
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    # Wait for each to exit (a daemon cleans up its own files).
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "$status" != 0 ]; then
    for log in "$work"/*.out "$work"/*.log "$work"/munge/*.log; do
      [ -f "$log" ] && { echo "--- $log"; tail -n 30 "$log"; }
    done
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

echo "building retrysim"
mkdir -p "$work/bin"
go build -o "$work/bin/retrysim" ./cmd/retrysim
export PATH="$work/bin:$PATH"

# munge: the key Debian's package made (or a new one), and the socket
# directory that systemd would have created.
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  mungekey --create --keyfile=/etc/munge/munge.key --force
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
fi
mkdir -p /run/munge
chown munge:munge /run/munge
chmod 0755 /run/munge
# Its socket, log and seed in a directory of its own.
chmod 0755 "$work"
install -d -o munge -g munge -m 0755 "$work/munge"
socket="$work/munge/munge.socket"
setpriv --reuid=munge --regid=munge --init-groups \
  munged --foreground --socket="$socket" --pid-file="$work/munge/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed" \
  >"$work/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { echo "munged did not start"; exit 1; }

# A one-node cluster on ports of its own: the node as slurmd sees it, processes tracked
# without cgroups, finished jobs forgotten after 5 s so that sbatch
# --wait returns promptly.
host=$(hostname -s)
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=retrysim-e2e
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=5
SlurmctldTimeout=30
SlurmdTimeout=30
$(slurmd -C | head -n 1)
PartitionName=e2e Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  state=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
  case $state in idle*|mix*) break ;; esac
  sleep 0.2
done
echo "cluster up in $(($(date +%s) - start)) s (node $host: ${state:-no answer})"
case $state in idle*|mix*) ;; *) echo "the node did not become idle"; exit 1 ;; esac

# The runs: each is submitted as the documented array of 4 shards into
# its own directory, and merged by the documented dependent job.
cd "$work"
names=(compare sweep)
commands=(
  "compare --seeds 40 --format markdown"
  "sweep --param clients=10:50:10 --seeds 8 --format csv"
)
merges=()
for i in "${!names[@]}"; do
  # shellcheck disable=SC2086 # the command line is split on purpose
  array=$(sbatch --parsable "$repo/docs/scale/slurm-shards.sh" "$work/${names[$i]}" ${commands[$i]})
  merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --output="$work/${names[$i]}.merged" "$repo/docs/scale/slurm-merge.sh" "$work/${names[$i]}")
  echo "${names[$i]}: array job $array, merge job $merge"
  merges+=("$merge")
done

# awaitJobs JOBID...: wait until the jobs have left the queue, bounded.
awaitJobs() {
  local deadline=$(($(date +%s) + 120))
  while squeue -h -j "$(IFS=,; echo "$*")" -o %i 2>/dev/null | grep -q .; do
    if [ "$(date +%s)" -gt "$deadline" ]; then
      squeue; echo "the jobs did not finish within 120 s"; exit 1
    fi
    sleep 0.5
  done
}
# The merges wait for their arrays.
awaitJobs "${merges[@]}"

status=0
for i in "${!names[@]}"; do
  name=${names[$i]}
  # shellcheck disable=SC2086
  if ! retrysim ${commands[$i]} >"$work/$name.want"; then
    echo "FAIL $name: the unsharded run failed (above)"; status=1; continue
  fi
  shards=$(ls "$work/$name" 2>/dev/null | grep -c '^shard-.*-of-4\.json$' || true)
  if [ "$shards" != 4 ] || ! cmp -s "$work/$name.want" "$work/$name.merged"; then
    echo "FAIL $name: $shards of 4 shard files; the merged output differs from the unsharded run:"
    diff "$work/$name.want" "$work/$name.merged" | head -n 20 || true
    cat retrysim-*.log 2>/dev/null | tail -n 20
    status=1
  else
    echo "ok $name: 4 shards on Slurm merged to the unsharded output ($(wc -c <"$work/$name.want") bytes)"
  fi
done
# Running some shards again, as docs/scale.md says: their IDs as the
# array, the number of shards given.
if [ "$status" = 0 ]; then
  rm "$work/compare/shard-1-of-4.json" "$work/compare/shard-3-of-4.json"
  # shellcheck disable=SC2086
  array=$(sbatch --parsable --array=1,3 "$repo/docs/scale/slurm-shards.sh" "$work/compare" ${commands[0]} --shards 4)
  merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --output="$work/compare.again" "$repo/docs/scale/slurm-merge.sh" "$work/compare")
  awaitJobs "$merge"
  if cmp -s "$work/compare.want" "$work/compare.again"; then
    echo "ok compare: shards 1 and 3 run again (--array=1,3 --shards 4) merged to the unsharded output"
  else
    echo "FAIL compare: shards 1 and 3 run again do not merge to the unsharded output:"
    diff "$work/compare.want" "$work/compare.again" | head -n 20 || true
    cat retrysim-*.log 2>/dev/null | tail -n 20
    status=1
  fi
fi
echo "Slurm end-to-end: $(($(date +%s) - start)) s"
exit "$status"
