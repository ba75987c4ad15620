#!/usr/bin/env bash
# install-deps.sh - install what preflight needs on Debian 12 when it is missing.
# Called by `make demo` and `make test`. Installs nothing when everything is there.
# PF_WITH_HIP=1 also installs Debian's hipcc to build the HIP calibration back-end.
set -eu
need=()
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
add() { case " ${need[*]-} " in *" $1 "*) ;; *) need+=("$1") ;; esac; }
# every program the build and the tests call (scripts/programs.txt: PROGRAM PACKAGE; checked by arch/programs)
while read -r prog pkg _; do
  case "$prog" in ''|'#'*) continue ;; esac
  command -v "$prog" >/dev/null 2>&1 || add "$pkg"
done <"$(dirname "$0")/programs.txt"
if [ "${PF_BENCH:-0}" = 1 ]; then  # bench/run.sh measures with GNU time and bc
  [ -x /usr/bin/time ] || need+=(time)
  command -v bc >/dev/null 2>&1 || need+=(bc)
fi
if command -v pkg-config >/dev/null 2>&1; then
  have_pc simgrid || need+=(libsimgrid-dev)
  have_pc gsl || need+=(libgsl-dev)
  have_pc libconfig || need+=(libconfig-dev)
  have_pc libcjson || need+=(libcjson-dev)
  have_pc cairo || need+=(libcairo2-dev)  # PDF and PNG figures (model/io/plot_cairo.c)
else
  need+=(libsimgrid-dev libgsl-dev libconfig-dev libcjson-dev libcairo2-dev)
fi
# the fuzz build (scripts/fuzz.sh: `make fuzz`, and CI's short run): clang and its libFuzzer and sanitizer
# runtimes (Debian 12 ships them in libclang-rt-14-dev, which libclang-common-14-dev only recommends, so
# --no-install-recommends leaves it out)
if [ "${PF_FUZZ:-0}" = 1 ] || [ "${CI:-}" = true ]; then
  command -v clang >/dev/null 2>&1 || need+=(clang)
  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || need+=(libclang-rt-14-dev)
fi
if [ "${PF_WITH_HIP:-0}" = 1 ] && ! command -v hipcc >/dev/null 2>&1; then need+=(hipcc libamdhip64-dev); fi
[ ${#need[@]} -eq 0 ] && exit 0
echo "preflight: installing ${need[*]}" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo
  else echo "preflight: need root (or sudo) to install: ${need[*]}" >&2; exit 1; fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
