/* cpu_fma.c - register-only FMA peak of one CPU core, per precision.
 *
 * Design from peakperf and mixbench (shared/research/energy-and-calibration.md
 * sections 2.1 and 2.6), transposed to CPUs: NACC = 12 independent
 * accumulator chains c = c * a + b per thread, each a full SIMD register, so
 * that latency x throughput of the FMA pipes (4 cycles x 2 pipes = 8 chains on
 * Zen 4, Ice Lake, Sapphire Rapids, Neoverse V2) is covered with room to spare
 * while everything stays in the 16 (AVX2) or 32 (AVX-512, NEON) vector
 * registers.  a and b are chosen so that x is the fixed point: values neither
 * grow, shrink to denormals, nor can be folded by the compiler (they arrive at
 * run time).  The build targets the x86-64 baseline (SSE2), so the AVX2+FMA
 * and AVX-512 versions are compiled with target attributes and picked at run
 * time with __builtin_cpu_supports; aarch64 uses NEON vfmaq.  Without FMA
 * (SSE2) the loop does a multiply and an add, still 2 FLOP per lane.
 *
 * Expected: 90-100 % of cores x clock x FMA lanes x 2 (x 2 pipes) at the clock
 * the cores hold under this load (AVX-512 may run at a lower clock).
 */
#include "cpu.h"

#include <math.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PFCAL_X86 1
#elif defined(__aarch64__)
#include <arm_neon.h>
#define PFCAL_NEON 1
#endif

#define REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define NACC 12

/* a = 1 - eps, b = eps * x: x * a + b = x */
#define EPS 1e-7

#ifdef PFCAL_X86
/* distinct starting points, or the compiler merges identical chains */
#define DECL(k) c##k = ADD(init, SPLAT(0.001 * (k)));
#define STEP(k) c##k = FMA(c##k, a, b);
#define SUM(k) s = ADD(s, c##k);

#define FMA(c, a, b) _mm512_fmadd_pd(c, a, b)
#define ADD(x, y) _mm512_add_pd(x, y)
#define SPLAT(v) _mm512_set1_pd(v)
__attribute__((target("avx512f"))) static double f64_avx512(long iters, double x) {
  __m512d a = _mm512_set1_pd(1.0 - EPS), b = _mm512_set1_pd(EPS * x), init = _mm512_set1_pd(x);
  __m512d c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, s = _mm512_setzero_pd();
  REP12(DECL)
  for (long i = 0; i < iters; i++) {
    REP12(STEP)
  }
  REP12(SUM)
  return _mm512_reduce_add_pd(s);
}
#undef FMA
#undef ADD
#undef SPLAT

#define FMA(c, a, b) _mm512_fmadd_ps(c, a, b)
#define ADD(x, y) _mm512_add_ps(x, y)
#define SPLAT(v) _mm512_set1_ps((float)(v))
__attribute__((target("avx512f"))) static double f32_avx512(long iters, double x) {
  __m512 a = _mm512_set1_ps((float)(1.0 - EPS * 10)), b = _mm512_set1_ps((float)(EPS * 10 * x)),
         init = _mm512_set1_ps((float)x);
  __m512 c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, s = _mm512_setzero_ps();
  REP12(DECL)
  for (long i = 0; i < iters; i++) {
    REP12(STEP)
  }
  REP12(SUM)
  return _mm512_reduce_add_ps(s);
}
#undef FMA
#undef ADD
#undef SPLAT

#define FMA(c, a, b) _mm256_fmadd_pd(c, a, b)
#define ADD(x, y) _mm256_add_pd(x, y)
#define SPLAT(v) _mm256_set1_pd(v)
__attribute__((target("avx2,fma"))) static double f64_avx2(long iters, double x) {
  __m256d a = _mm256_set1_pd(1.0 - EPS), b = _mm256_set1_pd(EPS * x), init = _mm256_set1_pd(x);
  __m256d c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, s = _mm256_setzero_pd();
  REP12(DECL)
  for (long i = 0; i < iters; i++) {
    REP12(STEP)
  }
  REP12(SUM)
  double out[4];
  _mm256_storeu_pd(out, s);
  return out[0] + out[1] + out[2] + out[3];
}
#undef FMA
#undef ADD
#undef SPLAT

#define FMA(c, a, b) _mm256_fmadd_ps(c, a, b)
#define ADD(x, y) _mm256_add_ps(x, y)
#define SPLAT(v) _mm256_set1_ps((float)(v))
__attribute__((target("avx2,fma"))) static double f32_avx2(long iters, double x) {
  __m256 a = _mm256_set1_ps((float)(1.0 - EPS * 10)), b = _mm256_set1_ps((float)(EPS * 10 * x)),
         init = _mm256_set1_ps((float)x);
  __m256 c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, s = _mm256_setzero_ps();
  REP12(DECL)
  for (long i = 0; i < iters; i++) {
    REP12(STEP)
  }
  REP12(SUM)
  float out[8];
  _mm256_storeu_ps(out, s);
  double t = 0;
  for (int i = 0; i < 8; i++)
    t += out[i];
  return t;
}
#undef FMA
#undef ADD
#undef SPLAT

/* SSE2 baseline: no FMA instruction, a multiply and an add per lane. */
#define FMA(c, a, b) _mm_add_pd(_mm_mul_pd(c, a), b)
#define ADD(x, y) _mm_add_pd(x, y)
#define SPLAT(v) _mm_set1_pd(v)
static double f64_sse2(long iters, double x) {
  __m128d a = _mm_set1_pd(1.0 - EPS), b = _mm_set1_pd(EPS * x), init = _mm_set1_pd(x);
  __m128d c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, s = _mm_setzero_pd();
  REP12(DECL)
  for (long i = 0; i < iters; i++) {
    REP12(STEP)
  }
  REP12(SUM)
  double out[2];
  _mm_storeu_pd(out, s);
  return out[0] + out[1];
}
#undef FMA
#undef ADD
#undef SPLAT

#define FMA(c, a, b) _mm_add_ps(_mm_mul_ps(c, a), b)
#define ADD(x, y) _mm_add_ps(x, y)
#define SPLAT(v) _mm_set1_ps((float)(v))
static double f32_sse2(long iters, double x) {
  __m128 a = _mm_set1_ps((float)(1.0 - EPS * 10)), b = _mm_set1_ps((float)(EPS * 10 * x)), init = _mm_set1_ps((float)x);
  __m128 c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, s = _mm_setzero_ps();
  REP12(DECL)
  for (long i = 0; i < iters; i++) {
    REP12(STEP)
  }
  REP12(SUM)
  float out[4];
  _mm_storeu_ps(out, s);
  return (double)out[0] + out[1] + out[2] + out[3];
}
#undef FMA
#undef ADD
#undef SPLAT

enum { ISA_SSE2, ISA_AVX2, ISA_AVX512 };
static int isa(void) {
  static int cached = -1;
  if (cached < 0) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      cached = ISA_AVX512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      cached = ISA_AVX2;
    else
      cached = ISA_SSE2;
  }
  return cached;
}

const char *pfcal_cpu_isa(void) {
  switch (isa()) {
  case ISA_AVX512:
    return "avx512";
  case ISA_AVX2:
    return "avx2";
  default:
    return "sse2";
  }
}

double pfcal_cpu_fma(pf_precision p, long iters, double x, double *flop) {
  static const int lanes64[] = {2, 4, 8}, lanes32[] = {4, 8, 16};
  int i = isa();
  if (p == PF_FP64) {
    *flop = 2.0 * NACC * lanes64[i] * (double)iters;
    return i == ISA_AVX512 ? f64_avx512(iters, x) : i == ISA_AVX2 ? f64_avx2(iters, x) : f64_sse2(iters, x);
  }
  if (p == PF_FP32) {
    *flop = 2.0 * NACC * lanes32[i] * (double)iters;
    return i == ISA_AVX512 ? f32_avx512(iters, x) : i == ISA_AVX2 ? f32_avx2(iters, x) : f32_sse2(iters, x);
  }
  *flop = 0;
  return NAN;
}

#elif defined(PFCAL_NEON)

#define DECL(k) c##k = ADD(init, SPLAT(0.001 * (k)));
#define STEP(k) c##k = FMA(c##k, a, b);
#define SUM(k) s = ADD(s, c##k);

const char *pfcal_cpu_isa(void) { return "neon"; }

#define FMA(c, a, b) vfmaq_f64(b, c, a)
#define ADD(x, y) vaddq_f64(x, y)
#define SPLAT(v) vdupq_n_f64(v)
static double f64_neon(long iters, double x) {
  float64x2_t a = vdupq_n_f64(1.0 - EPS), b = vdupq_n_f64(EPS * x), init = vdupq_n_f64(x);
  float64x2_t c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, s = vdupq_n_f64(0);
  REP12(DECL)
  for (long i = 0; i < iters; i++) {
    REP12(STEP)
  }
  REP12(SUM)
  return vaddvq_f64(s);
}
#undef FMA
#undef ADD
#undef SPLAT

#define FMA(c, a, b) vfmaq_f32(b, c, a)
#define ADD(x, y) vaddq_f32(x, y)
#define SPLAT(v) vdupq_n_f32((float)(v))
static double f32_neon(long iters, double x) {
  float32x4_t a = vdupq_n_f32((float)(1.0 - EPS * 10)), b = vdupq_n_f32((float)(EPS * 10 * x)),
              init = vdupq_n_f32((float)x);
  float32x4_t c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, s = vdupq_n_f32(0);
  REP12(DECL)
  for (long i = 0; i < iters; i++) {
    REP12(STEP)
  }
  REP12(SUM)
  return vaddvq_f32(s);
}
#undef FMA
#undef ADD
#undef SPLAT

double pfcal_cpu_fma(pf_precision p, long iters, double x, double *flop) {
  if (p == PF_FP64) {
    *flop = 2.0 * NACC * 2 * (double)iters;
    return f64_neon(iters, x);
  }
  if (p == PF_FP32) {
    *flop = 2.0 * NACC * 4 * (double)iters;
    return f32_neon(iters, x);
  }
  *flop = 0;
  return NAN;
}

#else /* portable scalar fallback: fma() is a hardware instruction where it exists */

const char *pfcal_cpu_isa(void) { return "scalar"; }

double pfcal_cpu_fma(pf_precision p, long iters, double x, double *flop) {
  if (p != PF_FP64 && p != PF_FP32) {
    *flop = 0;
    return NAN;
  }
  double c[NACC], a = 1.0 - EPS, b = EPS * x, s = 0;
  for (int k = 0; k < NACC; k++)
    c[k] = x + 0.001 * k;
  for (long i = 0; i < iters; i++)
    for (int k = 0; k < NACC; k++)
      c[k] = fma(c[k], a, b);
  for (int k = 0; k < NACC; k++)
    s += c[k];
  *flop = 2.0 * NACC * (double)iters;
  return s;
}
#endif
