#!/usr/bin/env bash
# Makes sure the external programs the tests and benchmarks use are present, installing Debian packages
# when they are missing and we are root: etcd (etcd-server), kubectl (the machine's, else Debian's
# kubernetes-client) and the python client (python3-kubernetes). Prints the etcd binary path on stdout.
# Without root it fails with a clear message: these suites never skip silently.
set -euo pipefail
missing=()
find_etcd() {
  if [ -n "${ETCD_BIN:-}" ] && [ -x "$ETCD_BIN" ]; then echo "$ETCD_BIN"; return 0; fi
  command -v etcd 2>/dev/null && return 0
  [ -x /usr/bin/etcd ] && { echo /usr/bin/etcd; return 0; }
  return 1
}
# Debian's python3-kubernetes lives in the system python; a pyenv python3 on PATH cannot see it.
have_pyclient() {
  for py in "${SVCPLANE_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$py" ] && "$py" -c 'import kubernetes' >/dev/null 2>&1 && return 0
  done
  return 1
}
have_kubectl() {
  ls /usr/lib/google-cloud-sdk/bin/kubectl.1.* >/dev/null 2>&1 && return 0
  command -v kubectl >/dev/null 2>&1
}
find_etcd >/dev/null || missing+=(etcd-server)
have_kubectl || missing+=(kubernetes-client)
have_pyclient || missing+=(python3-kubernetes)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != "0" ]; then
    echo "ensure-deps: missing ${missing[*]} and this user is not root; install with 'sudo apt-get install -y ${missing[*]}'" >&2
    exit 1
  fi
  echo "ensure-deps: installing Debian packages: ${missing[*]} ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  # Debian's etcd package may start a system etcd on :2379 where an init system runs; the tests use their own.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
    systemctl stop etcd >&2 || true
  fi
fi
bin=$(find_etcd) || { echo "ensure-deps: etcd-server installed but no etcd binary found" >&2; exit 1; }
have_kubectl || { echo "ensure-deps: no kubectl after installing kubernetes-client" >&2; exit 1; }
have_pyclient || { echo "ensure-deps: python3-kubernetes is not importable (tried \$SVCPLANE_PYTHON, python3, /usr/bin/python3)" >&2; exit 1; }
echo "$bin"
