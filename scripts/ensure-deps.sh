#!/usr/bin/env bash
# Makes sure every external program the tests and benchmarks run is present, installing the Debian
# package that ships it when it is missing and we are root. Nothing may depend on what happens to be on a
# developer's machine: a program missing here is missing on a fresh machine too.
#
#   program                      Debian package        found as
#   etcd                         etcd-server           $ETCD_BIN, PATH, /usr/bin/etcd
#   etcdctl                      etcd-client           $ETCDCTL_BIN, beside etcd, PATH
#   kubectl                      kubernetes-client     $SVCPLANE_KUBECTL, the Cloud SDK's kubectl.1.33, PATH
#   python3 + kubernetes client  python3-kubernetes    $SVCPLANE_PYTHON, python3, /usr/bin/python3
#   chattr                       e2fsprogs             PATH
#   ip                           iproute2              PATH, /usr/sbin, /sbin, /bin
#   iptables (+ -restore, -save) iptables              PATH, /usr/sbin, /sbin (all three beside each other)
#   haproxy                      haproxy               PATH, /usr/sbin/haproxy
#   conntrack                    conntrack             PATH, /usr/sbin, /sbin (the proxy clears stale UDP flows)
#   nft                          nftables              $NFT_BIN, PATH, /usr/sbin, /sbin (the nftables proxy mode)
#   chromium                     chromium              $CHROMIUM_BIN, /usr/bin/chromium (the dashboard's browser tests)
#
# PATH often lacks /usr/sbin and /sbin for a non-login shell, so the sbin programs are looked up there too.
# On success it prints one KEY=VALUE line per program on stdout (ETCD_BIN, ETCDCTL_BIN, SVCPLANE_KUBECTL,
# SVCPLANE_PYTHON, CHATTR_BIN, IP_BIN, IPTABLES_BIN, HAPROXY_BIN, CONNTRACK_BIN, NFT_BIN, CHROMIUM_BIN), which scripts/test.mjs exports to the
# suites; iptables-restore and iptables-save are the ones beside $IPTABLES_BIN. On failure it prints one line
# naming the package(s) on stderr and exits 1: the suites never skip silently.
# SVCPLANE_DEPS_ONLY=etcd,etcdctl (a comma list of program names) limits the check to those programs.
set -euo pipefail

sdk_kubectl=/usr/lib/google-cloud-sdk/bin/kubectl.1.33

find_etcd() {
  if [ -n "${ETCD_BIN:-}" ] && [ -x "$ETCD_BIN" ]; then echo "$ETCD_BIN"; return 0; fi
  command -v etcd 2>/dev/null && return 0
  [ -x /usr/bin/etcd ] && { echo /usr/bin/etcd; return 0; }
  return 1
}
find_etcdctl() {
  if [ -n "${ETCDCTL_BIN:-}" ] && [ -x "$ETCDCTL_BIN" ]; then echo "$ETCDCTL_BIN"; return 0; fi
  local etcd
  if etcd=$(find_etcd) && [ -x "$(dirname "$etcd")/etcdctl" ]; then echo "$(dirname "$etcd")/etcdctl"; return 0; fi
  command -v etcdctl 2>/dev/null && return 0
  return 1
}
find_kubectl() {
  if [ -n "${SVCPLANE_KUBECTL:-}" ] && [ -x "$SVCPLANE_KUBECTL" ]; then echo "$SVCPLANE_KUBECTL"; return 0; fi
  [ -x "$sdk_kubectl" ] && { echo "$sdk_kubectl"; return 0; }
  command -v kubectl 2>/dev/null && return 0
  return 1
}
# Debian's python3-kubernetes lives in the system python; a pyenv python3 on PATH cannot see it.
find_python() {
  local py
  for py in "${SVCPLANE_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$py" ] && "$py" -c 'import kubernetes' >/dev/null 2>&1 && { command -v "$py"; return 0; }
  done
  return 1
}
find_chattr() { command -v chattr 2>/dev/null; }
# The first executable `$1` on PATH, then in the sbin (and bin) directories PATH may lack.
find_sbin() {
  command -v "$1" 2>/dev/null && return 0
  local dir
  for dir in /usr/sbin /sbin /usr/bin /bin; do
    [ -x "$dir/$1" ] && { echo "$dir/$1"; return 0; }
  done
  return 1
}
find_ip() { find_sbin ip; }
# iptables counts only with iptables-restore and iptables-save beside it (the proxy runs all three).
find_iptables() {
  local ipt dir
  ipt=$(find_sbin iptables) || return 1
  dir=$(dirname "$ipt")
  [ -x "$dir/iptables-restore" ] && [ -x "$dir/iptables-save" ] || return 1
  echo "$ipt"
}
find_conntrack() { find_sbin conntrack; }
find_nft() {
  if [ -n "${NFT_BIN:-}" ] && [ -x "$NFT_BIN" ]; then echo "$NFT_BIN"; return 0; fi
  find_sbin nft
}
# Debian's chromium (the browser tests drive it with playwright-core, which downloads no browser of its own).
find_chromium() {
  if [ -n "${CHROMIUM_BIN:-}" ] && [ -x "$CHROMIUM_BIN" ]; then echo "$CHROMIUM_BIN"; return 0; fi
  [ -x /usr/bin/chromium ] && { echo /usr/bin/chromium; return 0; }
  return 1
}
find_haproxy() {
  command -v haproxy 2>/dev/null && return 0
  [ -x /usr/sbin/haproxy ] && { echo /usr/sbin/haproxy; return 0; }
  return 1
}

# program | package | finder | variable printed
table=(
  "etcd|etcd-server|find_etcd|ETCD_BIN"
  "etcdctl|etcd-client|find_etcdctl|ETCDCTL_BIN"
  "kubectl|kubernetes-client|find_kubectl|SVCPLANE_KUBECTL"
  "python3-kubernetes|python3-kubernetes|find_python|SVCPLANE_PYTHON"
  "chattr|e2fsprogs|find_chattr|CHATTR_BIN"
  "ip|iproute2|find_ip|IP_BIN"
  "iptables|iptables|find_iptables|IPTABLES_BIN"
  "haproxy|haproxy|find_haproxy|HAPROXY_BIN"
  "conntrack|conntrack|find_conntrack|CONNTRACK_BIN"
  "nft|nftables|find_nft|NFT_BIN"
  "chromium|chromium|find_chromium|CHROMIUM_BIN"
)
wanted() { [ -z "${SVCPLANE_DEPS_ONLY:-}" ] || [[ ",$SVCPLANE_DEPS_ONLY," == *",$1,"* ]]; }

missing=()
for row in "${table[@]}"; do
  IFS='|' read -r prog pkg finder _ <<<"$row"
  wanted "$prog" || continue
  "$finder" >/dev/null || missing+=("$pkg")
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != "0" ]; then
    echo "ensure-deps: missing Debian package(s) ${missing[*]}, and only root can install them: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "ensure-deps: installing Debian packages: ${missing[*]} ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp)
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 5 "$log" >&2
    echo "ensure-deps: 'apt-get install -y ${missing[*]}' failed (output above)" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  # Debian's etcd package may start a system etcd on :2379 where an init system runs; the tests use their own.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
    systemctl stop etcd >&2 || true
  fi
fi

for row in "${table[@]}"; do
  IFS='|' read -r prog pkg finder var <<<"$row"
  wanted "$prog" || continue
  if ! path=$("$finder"); then
    echo "ensure-deps: $prog is still missing after installing Debian's $pkg" >&2
    exit 1
  fi
  echo "$var=$path"
done
