#!/usr/bin/env bash
# Starts a one-host Slurm cluster for gpuflow's Slurm tests: Debian's
# slurm-wlm and munge, slurmdbd on MariaDB so that sacct works as on a real
# cluster, and two node names on this host (gpuflow-n1, gpuflow-n2, each a
# slurmd of its own on its own port) when this Slurm build runs several
# slurmd on one host, else one node named after the host. It waits until
# sinfo shows every node idle.
#
# Run as root on a Debian (bookworm) machine or container you do not mind
# turning into a Slurm controller:   sudo scripts/slurm/setup.sh
# Running it again does nothing while the cluster it started is up. To
# take it down: scripts/slurm/setup.sh stop
#
# Ports: slurmctld 6817, slurmdbd 6819, slurmd 6818 (one node) or 17001
# and 17002 (two). Logs: /var/log/slurm/. GPUFLOW_SLURM_NODES=1 asks for
# one node only. Not for production: SlurmUser is
# root, the database password is fixed, and nothing is confined by cgroups.
set -euo pipefail

readonly marker="# written by gpuflow scripts/slurm/setup.sh"
readonly conf=/etc/slurm/slurm.conf
readonly dbdconf=/etc/slurm/slurmdbd.conf
readonly logdir=/var/log/slurm
readonly statedir=/var/lib/slurm
readonly rundir=/run/gpuflow-slurm
readonly db_password=gpuflow-slurm-test

log() { echo "slurm setup: $*"; }
die() { echo "slurm setup: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (sudo $0): it installs packages and starts daemons"

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmdbd >/dev/null && command -v munged >/dev/null &&
     command -v mariadbd >/dev/null; then
    return
  fi
  log "installing slurm-wlm, slurmdbd, munge and mariadb-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm slurmdbd slurm-client munge mariadb-server >/dev/null
}

# pid_alive FILE: the process named in a pid file we wrote is running.
pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_pid FILE: ends the process a pid file of ours names, and waits.
stop_pid() {
  local f=$1 pid
  pid_alive "$f" || { rm -f "$f"; return 0; }
  pid=$(cat "$f")
  kill "$pid"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  rm -f "$f"
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return; fi
  log "starting munged"
  [ -s /etc/munge/munge.key ] || { mungekey --create --keyfile=/etc/munge/munge.key; chown munge:munge /etc/munge/munge.key; }
  mkdir -p /run/munge && chown munge:munge /run/munge
  runuser -u munge -- munged
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return; sleep 0.2; done
  die "munged did not start"
}

start_mariadb() {
  if mariadb-admin ping >/dev/null 2>&1; then return; fi
  log "starting mariadb"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  runuser -u mysql -- mariadbd --pid-file=/run/mysqld/mysqld.pid --socket=/run/mysqld/mysqld.sock \
    >>"$logdir/mariadb.log" 2>&1 &
  for _ in $(seq 100); do mariadb-admin ping >/dev/null 2>&1 && break; sleep 0.2; done
  mariadb-admin ping >/dev/null 2>&1 || die "mariadb did not start; see $logdir/mariadb.log"
  mariadb -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$db_password';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
}

write_dbd_conf() {
  cat >"$dbdconf" <<EOF
$marker
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=root
LogFile=$logdir/slurmdbd.log
PidFile=$rundir/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$db_password
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$dbdconf"
}

# write_conf N: slurm.conf with N node names (1 or 2) on this host.
write_conf() {
  local n=$1 host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / n / 2 ))
  cat >"$conf" <<EOF
$marker
ClusterName=gpuflow
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$statedir/slurmctld
SlurmdSpoolDir=$statedir/slurmd/%n
SlurmctldPidFile=$rundir/slurmctld.pid
SlurmdPidFile=$rundir/slurmd-%n.pid
SlurmctldLogFile=$logdir/slurmctld.log
SlurmdLogFile=$logdir/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=300
MessageTimeout=10
SlurmctldTimeout=30
SlurmdTimeout=30
EOF
  if [ "$n" = 2 ]; then
    for i in 1 2; do
      echo "NodeName=gpuflow-n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=1700$i CPUs=$cpus RealMemory=$mem State=UNKNOWN" >>"$conf"
    done
  else
    echo "NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN" >>"$conf"
  fi
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$conf"
}

node_names() { grep '^NodeName=' "$conf" | sed 's/^NodeName=\([^ ]*\).*/\1/'; }

start_slurmdbd() {
  pid_alive "$rundir/slurmdbd.pid" && return
  log "starting slurmdbd"
  slurmdbd
  for _ in $(seq 100); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.2; done
  sacctmgr -n list cluster >/dev/null 2>&1 || die "slurmdbd did not answer; see $logdir/slurmdbd.log"
  sacctmgr -n list cluster format=cluster | grep -qw gpuflow || sacctmgr -i add cluster gpuflow >/dev/null
}

start_slurm() {
  log "starting slurmctld"
  slurmctld -i
  for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
  local node
  for node in $(node_names); do
    mkdir -p "$statedir/slurmd/$node"
    log "starting slurmd for node $node"
    if [ "$(node_names | wc -l)" = 1 ]; then slurmd; else slurmd -N "$node"; fi
  done
}

stop_slurm() {
  local f
  for f in "$rundir"/slurmd-*.pid "$rundir/slurmctld.pid"; do
    [ -e "$f" ] && stop_pid "$f"
  done
  return 0
}

# wait_nodes SECONDS STATES: every configured node shows one of STATES
# (an awk regular expression) in sinfo.
wait_nodes() {
  local want got
  want=$(node_names | wc -l)
  for _ in $(seq $(( $1 * 2 ))); do
    got=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk -v s="^($2)\$" '$2 ~ s' | wc -l)
    [ "$got" = "$want" ] && return 0
    sleep 0.5
  done
  return 1
}

wait_idle() { wait_nodes "$1" idle; }

# cluster_up: the cluster this script started answers, its nodes idle or
# running jobs (tests may be running).
# ensure_accounting brings back sacct's path when the cluster is up but its
# database went away (MariaDB stopped): without it sacct answers nothing and
# jobs look stateless.
ensure_accounting() {
  sacctmgr -n list cluster >/dev/null 2>&1 && return
  log "accounting does not answer; restarting mariadb and slurmdbd"
  start_mariadb
  stop_pid "$rundir/slurmdbd.pid"
  start_slurmdbd
}

cluster_up() {
  grep -qF "$marker" "$conf" 2>/dev/null && pid_alive "$rundir/slurmctld.pid" && wait_nodes 5 'idle|mix|alloc|comp'
}

main() {
  if [ "${1:-}" = stop ]; then
    stop_slurm
    stop_pid "$rundir/slurmdbd.pid"
    log "stopped slurmctld, slurmd and slurmdbd (munged and mariadb keep running)"
    return
  fi
  install_packages
  mkdir -p "$logdir" "$statedir/slurmctld" "$rundir" /etc/slurm
  if cluster_up; then
    ensure_accounting
    log "already up:"; sinfo; return
  fi
  [ ! -e "$conf" ] || grep -qF "$marker" "$conf" || die "$conf exists and was not written by this script; move it away first"
  stop_slurm
  start_munge
  start_mariadb
  write_dbd_conf
  write_conf 2 # sacctmgr reads slurm.conf to find slurmdbd
  start_slurmdbd
  # Two node names need a build that runs several slurmd on one host; a
  # build without it leaves them down, and one node is used instead.
  # GPUFLOW_SLURM_NODES=1 asks for one from the start.
  local n
  for n in $( [ "${GPUFLOW_SLURM_NODES:-2}" = 1 ] && echo 1 || echo 2 1 ); do
    write_conf "$n"
    start_slurm
    if wait_idle 30; then
      log "cluster up with $n node name(s):"; sinfo; return
    fi
    log "$n node name(s) did not come up idle; $(sinfo -h -N -o '%N %t %E' 2>&1 | tr '\n' ';')"
    stop_slurm
  done
  die "no node came up idle; see $logdir/slurmctld.log and $logdir/slurmd-*.log"
}

main "$@"
