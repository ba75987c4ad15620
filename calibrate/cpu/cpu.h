/* cpu.h - internals of the cpu back-end shared by its files: the host and the
 * worker pool (cpu_host.c), the FMA loops (cpu_fma.c), the measurements and
 * the function table (cpu_backend.c). */
#ifndef PFCAL_CPU_H
#define PFCAL_CPU_H

#include "../harness/pfcal.h"
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

/* ---- the host and its worker pool (cpu_host.c) ---- */

/* A task run on every thread of the pool: tid 0..nth-1, 0 the caller. */
typedef void (*pfcal_cpu_task)(int tid, int nth, void *arg);

/* The host: name, vendor, ISA, cores this process may use (or o->threads),
 * clock, memory and last-level cache. */
int pfcal_cpu_probe(const pfcal_opts *o, pfcal_info *in);

/* Start want threads (0: one per allowed core), each pinned to a core.
 * Returns 0 or PF_ENOMEM naming the thread that could not start. */
int pfcal_cpu_pool_start(int want);
/* Threads of the pool, the caller included. */
int pfcal_cpu_pool_size(void);
/* Run fn on every thread of the pool and return when all are done. */
void pfcal_cpu_pool_run(pfcal_cpu_task fn, void *arg);
/* Add v to thread tid's result slot (a value kept so the work is not removed). */
void pfcal_cpu_sink_add(int tid, double v);
/* Join the threads; safe when the pool is not running. */
void pfcal_cpu_pool_stop(void);

#endif
