#!/usr/bin/env bash
# Prepare the local MariaDB and PostgreSQL servers for pysysbench's tests and
# benchmarks: start them if they are down, create the sysbench-default `sbtest`
# user (no password) and the test databases. The servers are used as they run:
# no global setting is changed and nothing is restarted (tests that need other
# settings start private servers of their own, tests/integration/private_servers.py).
# Idempotent: a second run changes nothing.
# Must run as root (it may start servers).
# --mariadb-start-only: start the main MariaDB if it is down, and do nothing else.
# --start-only: start both servers if they are down, and do nothing else.
# -E: the ERR trap also fires for failures inside functions.
set -Eeuo pipefail

MY_HOST=127.0.0.1
MY_PORT=${SETUP_MY_PORT:-3306}

PG_HOST=127.0.0.1
# SETUP_PG_PORT points the user/database part at another (running) PostgreSQL (the tests
# use a private one); starting a server that is down is done for the machine's cluster only.
PG_PORT=${SETUP_PG_PORT:-5432}

WAIT_SECONDS=60

log() { echo "setup-databases: $*"; }
die() { echo "setup-databases: ERROR: $*" >&2; exit 1; }
# Unexpected failures (mysql/psql print their own error first): name the failed step,
# i.e. the top-level line, once (not again from each enclosing $(...) subshell).
on_err() {
    ((BASH_SUBSHELL == 0)) || return 0
    local line=${BASH_LINENO[-2]}
    local text
    text=$(sed -n "${line}{s/^[[:space:]]*//;p}" "${BASH_SOURCE[-1]}")
    echo "setup-databases: ERROR: failed at line $line: $text" >&2
}
trap on_err ERR

# ---------------------------------------------------------------- MariaDB ---

my_ping() { mysqladmin --protocol=TCP -h"$MY_HOST" -P"$MY_PORT" -uroot --connect-timeout=2 ping; }
# Root has an empty password over TCP on this setup; --batch/-N give bare values.
my_root() { mysql --protocol=TCP -h"$MY_HOST" -P"$MY_PORT" -uroot --batch --skip-column-names "$@"; }

# The main server is the one /usr/sbin/mariadbd starts with its own configuration (pid file
# /run/mysqld/mysqld.pid on Debian). Private test servers and Galera nodes run other mariadbd
# processes: `start-stop-daemon --oknodo --exec /usr/sbin/mariadbd` counts those as "already
# running" and starts nothing, so only the main server's pid file (and the process started
# here) is looked at. SETUP_MY_PORT / SETUP_MARIADBD_ARGS point this at another instance
# (the tests use a private one); the defaults are the machine's main server.
read -ra MARIADBD_ARGS <<<"${SETUP_MARIADBD_ARGS:-}"
MARIADBD=(/usr/sbin/mariadbd "${MARIADBD_ARGS[@]}")
# --print-defaults must come first; options given here override the configuration's.
MY_PID_FILE=$({ /usr/sbin/mariadbd --print-defaults; echo "${MARIADBD_ARGS[@]}"; } \
              | tr ' ' '\n' | sed -n 's/^--pid-file=//p' | tail -n 1)

# True when the main server's pid file names a live mariadbd (starting up or shutting down).
main_mariadbd_alive() {
    local pid
    [[ -n $MY_PID_FILE && -s $MY_PID_FILE ]] || return 1
    pid=$(<"$MY_PID_FILE")
    [[ $pid =~ ^[0-9]+$ ]] && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == */mariadbd ]]
}

if ! my_ping >/dev/null 2>&1; then
    log "MariaDB: not accepting connections on $MY_HOST:$MY_PORT, starting mariadbd"
    # /run is a tmpfs on fresh machines; mariadbd cannot create its socket/pid without this.
    install -d -o mysql -g mysql /run/mysqld /var/log/mysql
    deadline=$((SECONDS + WAIT_SECONDS))
    started=""
    until my_ping >/dev/null 2>&1; do
        # Started again only when neither the main server (still shutting down, or starting
        # before its pid file appears) nor the one started here is alive.
        if ! main_mariadbd_alive && ! { [[ -n $started ]] && kill -0 "$started" 2>/dev/null; }; then
            setsid "${MARIADBD[@]}" --user=mysql </dev/null >/dev/null 2>&1 &
            started=$!
        fi
        ((SECONDS < deadline)) || die "MariaDB did not accept connections within ${WAIT_SECONDS} s (see /var/log/mysql/error.log)"
        sleep 1
    done
    log "MariaDB: up"
fi
if [[ ${1:-} == --mariadb-start-only ]]; then
    exit 0
fi

# ------------------------------------------------------- PostgreSQL: start ---

pg_versions=$(ls /etc/postgresql)
[[ $pg_versions =~ ^[0-9]+$ ]] || die "PostgreSQL: expected exactly one version under /etc/postgresql, found: ${pg_versions//$'\n'/ }"
PG_VER=$pg_versions
PG_LOG=/var/log/postgresql/postgresql-$PG_VER-main.log

pg_ready() { pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2; }
# client_min_messages hides "already exists, skipping" notices on repeat runs.
pg_super() {
    PGOPTIONS='-c client_min_messages=warning' \
        psql -X -w -q -At -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U postgres "$@"
}
# pg_ctl ACTION [pg_ctlcluster options]
pg_ctl() {
    local action=$1; shift
    pg_ctlcluster --skip-systemctl-redirect "$@" "$PG_VER" main "$action"
}

# pg_start [pg_ctlcluster options]; returns non-zero if the server failed to start
# (the caller reports it, the details are in $PG_LOG).
pg_start() {
    local rc deadline=$((SECONDS + WAIT_SECONDS))
    while true; do
        rc=0
        pg_ctl start "$@" >/dev/null 2>&1 || rc=$?
        # 2 = a server is running: starting up, or shutting down (then retried here).
        ((rc == 0 || rc == 2)) || return 1
        pg_ready && return 0
        ((SECONDS < deadline)) || die "PostgreSQL did not accept connections within ${WAIT_SECONDS} s (see $PG_LOG)"
        sleep 1
    done
}

if ! pg_ready; then
    [[ $PG_PORT == 5432 ]] || die "PostgreSQL: nothing accepts connections on $PG_HOST:$PG_PORT (SETUP_PG_PORT); only the machine's cluster on 5432 is started here"
    log "PostgreSQL: not accepting connections on $PG_HOST:$PG_PORT, starting cluster $PG_VER/main"
    pg_start || die "PostgreSQL: cluster $PG_VER/main failed to start (see $PG_LOG)"
    log "PostgreSQL: up"
fi

if [[ ${1:-} == --start-only ]]; then
    exit 0
fi

# -------------------------------------------------- MariaDB: user, databases ---

my_root -e "SELECT 1" >/dev/null || die "MariaDB: cannot log in as root without password over TCP"

if [[ -z $(my_root -e "SHOW DATABASES LIKE 'sbtest'") ]]; then
    log "MariaDB: creating database sbtest"
    my_root -e "CREATE DATABASE sbtest"
fi

for host in localhost 127.0.0.1 %; do
    # Empty = no such user; 1 = password-less; 0 = has a password or another auth plugin.
    no_password=$(my_root -e "SELECT authentication_string = '' AND plugin IN ('', 'mysql_native_password')
                              FROM mysql.user WHERE User = 'sbtest' AND Host = '$host'")
    if [[ -z $no_password ]]; then
        log "MariaDB: creating user 'sbtest'@'$host' (no password)"
        my_root -e "CREATE USER 'sbtest'@'$host'"
    elif [[ $no_password != 1 ]]; then
        # sysbench's default is a password-less sbtest user.
        log "MariaDB: clearing the password of 'sbtest'@'$host'"
        my_root -e "ALTER USER 'sbtest'@'$host' IDENTIFIED BY ''"
    fi
    # A no-op when already granted.
    my_root -e "GRANT ALL PRIVILEGES ON sbtest.* TO 'sbtest'@'$host'"
done

# `legacy`: the sysbench 0.5 / XA / rand-compat tests' own database (other tests drop
# sbtest% tables in `sbtest` concurrently). Idempotent like the rest.
my_root -e "CREATE DATABASE IF NOT EXISTS legacy"
my_root -e "GRANT ALL ON legacy.* TO 'sbtest'@'127.0.0.1', 'sbtest'@'localhost', 'sbtest'@'%'"
# `campaign`: the campaign tests' and example campaigns' own database (same reason).
my_root -e "CREATE DATABASE IF NOT EXISTS campaign"
my_root -e "GRANT ALL ON campaign.* TO 'sbtest'@'127.0.0.1', 'sbtest'@'localhost', 'sbtest'@'%'"
# `cluster`: the Ray (several client machines) tests' own database (same reason).
my_root -e "CREATE DATABASE IF NOT EXISTS cluster"
my_root -e "GRANT ALL ON cluster.* TO 'sbtest'@'127.0.0.1', 'sbtest'@'localhost', 'sbtest'@'%'"
# `load`: the fast-prepare tests' and bench/prepare_speed.py's own database (same reason;
# LOAD is a reserved word, hence the backquotes).
my_root -e "CREATE DATABASE IF NOT EXISTS \`load\`"
my_root -e "GRANT ALL ON \`load\`.* TO 'sbtest'@'127.0.0.1', 'sbtest'@'localhost', 'sbtest'@'%'"

# No SET GLOBAL here: limits such as max_connections are the server owner's (a run that
# needs more says which setting to raise). prepare's fast path streams rows with LOAD DATA
# LOCAL INFILE and falls back to INSERTs when local_infile is off.

# ---------------------------------------------- PostgreSQL: role, databases ---

pg_super -d postgres <<'SQL'
SELECT 'CREATE ROLE sbtest LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sbtest')
\gexec
SELECT 'CREATE DATABASE sbtest OWNER sbtest' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'sbtest')
\gexec
SQL
# Re-assert on every run in case the role/database pre-existed in another shape.
pg_super -d postgres -c "ALTER ROLE sbtest LOGIN" -c "ALTER DATABASE sbtest OWNER TO sbtest" \
    -c "GRANT pg_read_all_stats TO sbtest"
pg_super -d sbtest -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
# `legacy`: the sysbench 0.5 / XA tests' own database (see the MariaDB part)
pg_super -d postgres <<'SQL'
SELECT 'CREATE DATABASE legacy OWNER sbtest' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'legacy')
\gexec
SQL
pg_super -d postgres -c "ALTER DATABASE legacy OWNER TO sbtest"
pg_super -d legacy -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
# `campaign`: the campaign tests' and example campaigns' own database (see the MariaDB part)
pg_super -d postgres <<'SQL'
SELECT 'CREATE DATABASE campaign OWNER sbtest' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'campaign')
\gexec
SQL
pg_super -d postgres -c "ALTER DATABASE campaign OWNER TO sbtest"
# `cluster`: the multi-node / Ray tests' own database (see the MariaDB part)
pg_super -d postgres <<'SQL'
SELECT 'CREATE DATABASE cluster OWNER sbtest' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'cluster')
\gexec
SQL
pg_super -d postgres -c "ALTER DATABASE cluster OWNER TO sbtest"
# `load`: the fast-prepare tests' and bench/prepare_speed.py's own database (see the MariaDB part)
pg_super -d postgres <<'SQL'
SELECT 'CREATE DATABASE load OWNER sbtest' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'load')
\gexec
SQL
pg_super -d postgres -c "ALTER DATABASE load OWNER TO sbtest"

# ------------------------------------------------------------------ verify ---

my_summary=$(mysql --protocol=TCP -h"$MY_HOST" -P"$MY_PORT" -usbtest --batch --skip-column-names \
    -e "SELECT CONCAT('MariaDB ', VERSION(), ' ok: sbtest@$MY_HOST (no password) -> db ', DATABASE(),
                      ', max_connections=', @@global.max_connections,
                      ', max_prepared_stmt_count=', @@global.max_prepared_stmt_count)" sbtest) \
    || die "MariaDB: user sbtest cannot connect to database sbtest on $MY_HOST:$MY_PORT"
log "$my_summary"

pg_summary=$(psql -X -w -At -h "$PG_HOST" -p "$PG_PORT" -U sbtest -d sbtest -c "
    SELECT format('PostgreSQL %s ok: %s@$PG_HOST -> db %s, max_connections=%s, max_prepared_transactions=%s',
                  current_setting('server_version'), current_user, current_database(),
                  current_setting('max_connections'), current_setting('max_prepared_transactions'))") \
    || die "PostgreSQL: user sbtest cannot connect to database sbtest on $PG_HOST:$PG_PORT"
log "$pg_summary"
