#!/usr/bin/env bash
# planted.sh - tests/arch/layers.py fails on each kind of broken include:
# a copy of model/ gets one planted edge at a time (an include that runs up
# the layers, one that reaches into another module's private header, one
# that closes a cycle, a same-module file included by path, a folder that is
# no module), and the checker must name it and exit 1; the clean copy passes.
set -u
. "$PF_SRC/tests/cli/lib.bash"
CHECK="python3 $PF_SRC/tests/arch/layers.py"

fresh() { rm -rf "$T/model"; cp -r "$PF_SRC/model" "$T/model"; }
plant() { # plant FILE LINE PATTERN: append LINE to model/FILE, expect exit 1 and PATTERN in the output
  fresh
  printf '%s\n' "$2" >>"$T/model/$1"
  expect_exit 1 $CHECK "$T/model"
  expect_grep "$3" "$T/out"
}

fresh
expect_exit 0 $CHECK "$T/model"
expect_grep "0 broken" "$T/out"
plant core/error.c '#include "study/study.h"' 'core/error.c:[0-9]+: #include "study/study.h": runs up the layers'
plant engine/pipeline.c '#include "comm/collbuild.h"' "reaches into module comm's private header"
plant machine/hardware.h '#include "calibration.h"' 'include cycle: .*machine/calibration.h.*machine/hardware.h'
plant engine/fullsim.c '#include "engine/pipeline.h"' 'same module is included by name'
plant cli/main.c '#include "nosuch.h"' 'no such file in model/cli/'
fresh
mkdir "$T/model/extra"
expect_exit 1 $CHECK "$T/model"
expect_grep "model/extra/: a folder that is not a module" "$T/out"
finish
