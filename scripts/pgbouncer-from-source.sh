#!/usr/bin/env bash
# Builds PgBouncer 1.24.1 from Debian's own source package (Debian 13's, checked against
# its SHA-256) into a prefix, for the test and bench runs behind a PgBouncer that keeps
# prepared statements: Debian 12 ships 1.18, which keeps none in transaction pooling.
# Prints the path of the binary. Needs root for the build dependencies, and reaches only
# Debian's archive. Usage: scripts/pgbouncer-from-source.sh [prefix]
set -euo pipefail

VERSION=1.24.1
SHA256=da72a3aba13072876d055a3e58dd4aba4a5de4ed6148e73033185245598fd3e0
PREFIX=${1:-/opt/pgbouncer-$VERSION}
BINARY="$PREFIX/bin/pgbouncer"

if [ -x "$BINARY" ] && "$BINARY" --version | grep -q "PgBouncer $VERSION"; then
  echo "$BINARY"
  exit 0
fi

(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  curl gcc make pkg-config libevent-dev libssl-dev libc-ares-dev) >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball="$work/pgbouncer_$VERSION.orig.tar.gz"
curl -fsS -o "$tarball" "http://deb.debian.org/debian/pool/main/p/pgbouncer/pgbouncer_$VERSION.orig.tar.gz"
echo "$SHA256  $tarball" | sha256sum --check --quiet
tar -xzf "$tarball" -C "$work"
(
  cd "$work/pgbouncer-$VERSION"
  ./configure --prefix="$PREFIX" --without-systemd --without-pam
  make -j"$(nproc)"
  make install
) >&2
echo "$BINARY"
