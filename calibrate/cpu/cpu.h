/* cpu.h - internals of the cpu back-end shared by its two files. */
#ifndef PFCAL_CPU_H
#define PFCAL_CPU_H

#include "machine/machine.h"

#include <stddef.h>

/* Widest FMA code path this CPU runs: "avx512", "avx2", "sse2" (mul + add,
 * no FMA), "neon", "scalar". Static string. */
const char *pfcal_cpu_isa(void);

/* Run `iters` iterations of the register-only FMA loop in precision p (PF_FP64
 * or PF_FP32) on the calling thread, starting every chain at x.  *flop gets
 * the floating-point operations done (2 per FMA lane).  Returns the chains'
 * sum, which the caller must keep so that the loop is not removed; NAN for an
 * unsupported precision. */
double pfcal_cpu_fma(pf_precision p, long iters, double x, double *flop);

#endif
