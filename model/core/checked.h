/* checked.h - products of user-given integers, checked for overflow.
 *
 * A GPU count, a batch or a port count is the product of numbers a user (or a
 * machine file) gives; an int that overflows is undefined behaviour in C and
 * would turn a large but valid-looking input into nonsense.  These return true
 * on overflow (the caller refuses the input with the limit named) and store
 * the product otherwise (GCC / Clang __builtin_mul_overflow). */
#ifndef PREFLIGHT_CHECKED_H
#define PREFLIGHT_CHECKED_H

#include <stdbool.h>

static inline bool pf_mul_overflow(int a, int b, int *out) { return __builtin_mul_overflow(a, b, out); }

static inline bool pf_mul4_overflow(int a, int b, int c, int d, int *out) {
  int ab, abc;
  return __builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc) ||
         __builtin_mul_overflow(abc, d, out);
}

#endif
