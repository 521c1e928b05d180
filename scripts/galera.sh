#!/usr/bin/env bash
# A real 3-node MariaDB Galera cluster on loopback, for trying pysysbench against a
# multi-primary target (and for its tests):
#
#   scripts/galera.sh start    # bootstrap node 1, join nodes 2 and 3, create user/db sbtest
#   scripts/galera.sh status   # one line per node: pid, port, cluster size, state
#   scripts/galera.sh stop     # clean shutdown, node 3 first, node 1 last
#   scripts/galera.sh clean    # stop, then delete the data directories
#
#   pysysbench oltp_read_write --mysql-host=127.0.0.1 --mysql-port=3311,3312,3313 ... run
#
# Node N (1..3) listens on 127.0.0.1 only: SQL on port BASE_PORT+N (3311-3313), Galera
# replication on 4567+10*(N-1) (4567, 4577, 4587), IST on the next port (4568, ...),
# rsync SST on 4444+10*(N-1).  Each node has its own data directory, socket, log and
# my.cnf under $GALERA_DIR/nodeN (default /var/tmp/pysysbench-galera) and is started
# with --defaults-file, so nothing is read from or written to the system MariaDB's
# configuration, and the server on port 3306 is never touched.  Only the mariadbd
# processes this script started (pid files under $GALERA_DIR, checked against their
# command line) are ever signalled.
#
# Small footprint (the tests share a 2-core machine): 64 MB buffer pool and gcache,
# performance_schema off.  Needs root (mariadbd runs as user mysql) and the Debian
# packages mariadb-server, galera-4 and rsync.  Idempotent: `start` on a running
# cluster only checks it; data directories are kept between stop and start.
set -Eeuo pipefail

GALERA_DIR=${GALERA_DIR:-/var/tmp/pysysbench-galera}
BASE_PORT=${GALERA_BASE_PORT:-3310}
NODES=3
PROVIDER=/usr/lib/galera/libgalera_smm.so
CLUSTER_NAME=pysysbench-galera
START_TIMEOUT_S=${GALERA_START_TIMEOUT_S:-180}
STOP_TIMEOUT_S=60
DB_USER=sbtest
DB_NAME=sbtest

log() { echo "galera: $*"; }
die() { echo "galera: ERROR: $*" >&2; exit 1; }

node_dir() { echo "$GALERA_DIR/node$1"; }
sql_port() { echo $((BASE_PORT + $1)); }
gcomm_port() { echo $((4567 + 10 * ($1 - 1))); }
ist_port() { echo $((4568 + 10 * ($1 - 1))); }
sst_port() { echo $((4444 + 10 * ($1 - 1))); }
sock() { echo "$(node_dir "$1")/mysqld.sock"; }
pid_file() { echo "$(node_dir "$1")/mariadbd.pid"; }

cluster_address() {
    local n out=""
    for ((n = 1; n <= NODES; n++)); do out+="${out:+,}127.0.0.1:$(gcomm_port "$n")"; done
    echo "gcomm://$out"
}

# root over the node's own socket (unix_socket authentication, as installed)
node_sql() {
    local n=$1; shift
    mariadb --no-defaults --socket="$(sock "$n")" -uroot --batch --skip-column-names "$@"
}

# The pid of node N's mariadbd if it is running and is ours (its command line names our
# defaults file, so a recycled pid is never signalled); empty otherwise.
node_pid() {
    local n=$1 pid cnf
    pid=$(cat "$(pid_file "$n")" 2>/dev/null) || return 0
    [[ $pid =~ ^[0-9]+$ ]] || return 0
    cnf="$(node_dir "$n")/my.cnf"
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "--defaults-file=$cnf"; then
        echo "$pid"
    fi
}

wsrep_status() { node_sql "$1" -e "SHOW GLOBAL STATUS LIKE '$2'" 2>/dev/null | awk '{print $2}'; }

write_config() {
    local n=$1 dir
    dir=$(node_dir "$n")
    cat >"$dir/my.cnf" <<EOF
# written by pysysbench scripts/galera.sh (node $n of $NODES)
[mariadbd]
datadir=$dir/data
socket=$(sock "$n")
pid-file=$dir/mariadbd-self.pid
log-error=$dir/error.log
port=$(sql_port "$n")
bind-address=127.0.0.1
skip-name-resolve
max_connections=500
performance_schema=OFF
innodb_buffer_pool_size=64M
innodb_log_file_size=48M
innodb_flush_log_at_trx_commit=2
innodb_autoinc_lock_mode=2
binlog_format=ROW
default_storage_engine=InnoDB
wsrep_on=ON
wsrep_provider=$PROVIDER
wsrep_cluster_name=$CLUSTER_NAME
wsrep_cluster_address=$(cluster_address)
wsrep_node_name=node$n
wsrep_node_address=127.0.0.1:$(gcomm_port "$n")
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(gcomm_port "$n");ist.recv_addr=127.0.0.1:$(ist_port "$n");gcache.size=64M"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$(sst_port "$n")
wsrep_slave_threads=2
EOF
}

init_node() {
    local n=$1 dir
    dir=$(node_dir "$n")
    install -d -o mysql -g mysql "$dir"
    write_config "$n"
    if [[ ! -d $dir/data/mysql ]]; then
        log "node $n: initialising $dir/data"
        mariadb-install-db --no-defaults --user=mysql --datadir="$dir/data" --skip-test-db \
            --auth-root-authentication-method=socket >"$dir/install-db.log" 2>&1 \
            || die "node $n: mariadb-install-db failed (see $dir/install-db.log)"
    fi
}

# start_node N [--wsrep-new-cluster]
start_node() {
    local n=$1 dir pid deadline
    shift
    dir=$(node_dir "$n")
    if [[ -n $(node_pid "$n") ]]; then
        return 0
    fi
    log "node $n: starting mariadbd on 127.0.0.1:$(sql_port "$n")${1:+ ($1)}"
    # setsid: the node survives the shell that started it; its pid is recorded for stop.
    setsid mariadbd --defaults-file="$dir/my.cnf" --user=mysql "$@" </dev/null >>"$dir/console.log" 2>&1 &
    pid=$!
    echo "$pid" >"$(pid_file "$n")"
    deadline=$((SECONDS + START_TIMEOUT_S))
    until [[ $(wsrep_status "$n" wsrep_local_state_comment) == Synced ]]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$(pid_file "$n")"
            die "node $n: mariadbd exited during start-up (see $dir/error.log)"
        fi
        ((SECONDS < deadline)) || die "node $n: not Synced within ${START_TIMEOUT_S} s (see $dir/error.log)"
        sleep 0.5
    done
    log "node $n: Synced (cluster size $(wsrep_status "$n" wsrep_cluster_size))"
}

# A node that was shut down last has safe_to_bootstrap: 1; node 1 is stopped last by
# `stop`, and after a crash it is the one we bootstrap anyway.
allow_bootstrap() {
    local state
    state="$(node_dir 1)/data/grastate.dat"
    if [[ -f $state ]]; then
        sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$state"
    fi
}

create_user() {
    node_sql 1 <<EOF
CREATE DATABASE IF NOT EXISTS $DB_NAME;
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1';
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost';
CREATE USER IF NOT EXISTS '$DB_USER'@'%';
GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'127.0.0.1', '$DB_USER'@'localhost', '$DB_USER'@'%';
EOF
}

cmd_start() {
    local n running=0
    command -v mariadbd >/dev/null || die "mariadbd not found: apt-get install mariadb-server"
    [[ -f $PROVIDER ]] || die "$PROVIDER not found: apt-get install galera-4"
    command -v rsync >/dev/null || die "rsync not found (needed for state transfer): apt-get install rsync"
    for ((n = 1; n <= NODES; n++)); do [[ -z $(node_pid "$n") ]] || running=$((running + 1)); done
    for ((n = 1; n <= NODES; n++)); do init_node "$n"; done
    if ((running == 0)); then
        allow_bootstrap
        start_node 1 --wsrep-new-cluster
    else
        start_node 1    # rejoins the nodes still running
    fi
    create_user
    for ((n = 2; n <= NODES; n++)); do start_node "$n"; done
    cmd_status
}

cmd_status() {
    local n pid up=0
    for ((n = 1; n <= NODES; n++)); do
        pid=$(node_pid "$n")
        if [[ -n $pid ]]; then
            up=$((up + 1))
            log "node $n: pid $pid, 127.0.0.1:$(sql_port "$n"), cluster size $(wsrep_status "$n" wsrep_cluster_size)," \
                "$(wsrep_status "$n" wsrep_local_state_comment)"
        else
            log "node $n: stopped (127.0.0.1:$(sql_port "$n"))"
        fi
    done
    ((up == NODES))
}

stop_node() {
    local n=$1 pid deadline
    pid=$(node_pid "$n")
    if [[ -z $pid ]]; then
        rm -f "$(pid_file "$n")"
        return 0
    fi
    log "node $n: stopping (pid $pid)"
    kill -TERM "$pid"
    deadline=$((SECONDS + STOP_TIMEOUT_S))
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS >= deadline)); then
            log "node $n: still running after ${STOP_TIMEOUT_S} s, killing pid $pid"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        sleep 0.2
    done
    rm -f "$(pid_file "$n")"
}

cmd_stop() {
    local n
    for ((n = NODES; n >= 1; n--)); do stop_node "$n"; done
    log "stopped"
}

cmd_clean() {
    cmd_stop
    # only our own directory, and only if it looks like ours
    if [[ -d $GALERA_DIR && -d $GALERA_DIR/node1 ]]; then
        rm -rf -- "$GALERA_DIR"
        log "removed $GALERA_DIR"
    fi
}

[[ $(id -u) == 0 ]] || die "must run as root (mariadbd is started as user mysql)"
case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    clean) cmd_clean ;;
    *) echo "usage: $0 start|stop|status|clean" >&2; exit 2 ;;
esac
