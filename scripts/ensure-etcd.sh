#!/usr/bin/env bash
# Makes sure a real etcd server binary is available for the tests and benchmarks.
# Uses $ETCD_BIN or `etcd` on PATH; when missing and running as root, installs Debian's etcd-server.
# Otherwise it fails with a clear message: the etcd conformance suite never skips silently.
set -euo pipefail
find_etcd() {
  if [ -n "${ETCD_BIN:-}" ] && [ -x "$ETCD_BIN" ]; then echo "$ETCD_BIN"; return 0; fi
  command -v etcd 2>/dev/null && return 0
  [ -x /usr/bin/etcd ] && { echo /usr/bin/etcd; return 0; }
  return 1
}
if bin=$(find_etcd); then echo "$bin"; exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "ensure-etcd: etcd is not installed and this user is not root; install it with 'sudo apt-get install -y etcd-server' or set ETCD_BIN" >&2
  exit 1
fi
echo "ensure-etcd: installing Debian's etcd-server ..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends etcd-server >&2
# Debian's package may start a system etcd on :2379 where an init system runs; the tests use their own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  systemctl stop etcd >&2 || true
fi
bin=$(find_etcd) || { echo "ensure-etcd: etcd-server installed but no etcd binary found" >&2; exit 1; }
echo "$bin"
