#!/usr/bin/env bash
# fresh-check.sh - run the README's two commands on a fresh Debian 12 machine.
#
# Builds a Debian 12 (bookworm) minbase root with debootstrap, copies the committed
# tree (HEAD, as a clean clone has it: `git archive`), and runs `make demo` and
# `make test` inside it with chroot.  Whatever the commands need beyond minbase
# they must install themselves (scripts/install-deps.sh); a program a test calls
# that the install script does not install fails here.
#
# Needs root (debootstrap, mount, chroot) and the network to a Debian mirror.
#   usage: sudo scripts/fresh-check.sh [ROOT_DIR]      (default /var/tmp/pf-fresh)
#   PF_FRESH_MIRROR=URL   Debian mirror (default http://deb.debian.org/debian)
#   PF_FRESH_KEEP=1       keep ROOT_DIR afterwards (default: removed on success)
#   PF_FRESH_CI=1         run `.ci/run` (CI=true: adds the sanitizer build) instead of `make test`
# Exit status: 0 when both commands passed, 1 when one failed (the log names it),
# 2 when the check could not be set up (not root, no debootstrap, no mirror).
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-/var/tmp/pf-fresh}
mirror=${PF_FRESH_MIRROR:-http://deb.debian.org/debian}
log="$root.log"

die() { echo "fresh-check: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, mount and chroot)"
command -v git >/dev/null 2>&1 || die "needs git to export the committed tree"
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "fresh-check: installing debootstrap" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null || die "cannot install debootstrap"
fi
case "$root" in /|/usr|/var|/tmp|/home|"") die "refusing ROOT_DIR '$root'";; esac

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
mnt() { mount "$@" && mounted+=("${@: -1}"); }

rm -rf "$root"
mkdir -p "$root"
: >"$log"
echo "fresh-check: debootstrap --variant=minbase bookworm $root (log: $log)" >&2
start=$(date +%s)
debootstrap --variant=minbase bookworm "$root" "$mirror" >>"$log" 2>&1 || die "debootstrap failed (see $log)"

mkdir -p "$root/src"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$root/src"
rev=$(git -C "$repo" rev-parse --short HEAD)
cp /etc/resolv.conf "$root/etc/resolv.conf"
mnt -t proc proc "$root/proc"
mnt -t sysfs sysfs "$root/sys"
mnt --bind /dev "$root/dev"
mnt --bind /dev/pts "$root/dev/pts"
mkdir -p "$root/dev/shm"

# The one program the README's commands need before they can install the rest: make itself (not in
# Debian's minimal base; the README says to install it first).
echo "fresh-check: apt-get install make (the README's one prerequisite)" | tee -a "$log" >&2
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  bash -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends make" >>"$log" 2>&1 ||
  die "cannot install make in the fresh root (see $log)"

testcmd="make test"
[ "${PF_FRESH_CI:-0}" = 1 ] && testcmd="bash .ci/run"
status=0
for cmd in "make demo" "$testcmd"; do
  echo "fresh-check: [$rev] $cmd" | tee -a "$log" >&2
  t0=$(date +%s)
  if chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
       PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
       bash -c "cd /src && $cmd" >>"$log" 2>&1; then
    echo "fresh-check: $cmd passed in $(( $(date +%s) - t0 )) s" | tee -a "$log" >&2
  else
    echo "fresh-check: $cmd FAILED after $(( $(date +%s) - t0 )) s (see $log)" | tee -a "$log" >&2
    status=1
    break
  fi
done
grep -E '^(100% tests passed|[0-9]+% tests passed)' "$log" | sed 's/^/fresh-check: /' >&2 || true
echo "fresh-check: $([ $status = 0 ] && echo passed || echo failed) at $rev in $(( $(date +%s) - start )) s" >&2
cleanup
mounted=()
if [ $status = 0 ] && [ "${PF_FRESH_KEEP:-0}" != 1 ]; then rm -rf "$root"; fi
exit $status
