#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL server:
#   bash Backends/MirrorStorePostgres/Scripts/with-postgres.sh swift test --package-path Backends/MirrorStorePostgres
# Installs Debian's postgresql package when its binaries are missing, initialises a cluster in a
# temporary directory (as the postgres user when run as root: the server refuses to run as root),
# starts it on a free loopback port with its socket in that directory, exports
# MIRRORSTORE_POSTGRES_HOST, _PORT, _USER and _DATABASE for the command, and always stops the
# server and removes the directory, whatever the command does. Exits with the command's status.
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 command [arguments…]" >&2
    exit 2
fi

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
bin="$(find_bin || true)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "with-postgres: installing Debian's postgresql package" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
    bin="$(find_bin)"
fi

# The server's user: ourselves, or postgres when we are root.
as_server=()
server_user="$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
    server_user=postgres
    id -u postgres >/dev/null 2>&1 || useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin postgres
    as_server=(runuser -u postgres --)
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/mirrorstore-postgres.XXXXXX")"
chmod 755 "$dir"
[ "$server_user" = "$(id -un)" ] || chown "$server_user" "$dir"
started=0
cleanup() {
    if [ "$started" -eq 1 ]; then
        "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# A free loopback port: ask the kernel for one.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null || echo 55432)"

"${as_server[@]}" "$bin/initdb" -D "$dir/data" -U mirrorstore --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
"${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null \
    || { cat "$dir/server.log" >&2; exit 1; }
started=1
"${as_server[@]}" "$bin/createdb" -h 127.0.0.1 -p "$port" -U mirrorstore mirrorstore

export MIRRORSTORE_POSTGRES_HOST=127.0.0.1
export MIRRORSTORE_POSTGRES_PORT="$port"
export MIRRORSTORE_POSTGRES_USER=mirrorstore
export MIRRORSTORE_POSTGRES_DATABASE=mirrorstore
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2

status=0
"$@" || status=$?
exit "$status"
