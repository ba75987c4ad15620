/* check.h - a tiny assert harness: each failed check prints both values and
 * the location, the test goes on, and main() returns the failure count.
 * The last line follows the "N passed, N failed" convention. */
#ifndef PF_CHECK_H
#define PF_CHECK_H
#include <math.h>
#include <stdio.h>
#include <string.h>

static int pf_check_pass, pf_check_fail;

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (cond) pf_check_pass++;                                                             \
    else { pf_check_fail++; fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } \
  } while (0)

#define CHECK_INT(a, b)                                                                    \
  do {                                                                                     \
    long long va_ = (long long)(a), vb_ = (long long)(b);                                  \
    if (va_ == vb_) pf_check_pass++;                                                       \
    else { pf_check_fail++; fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n",     \
                                    __FILE__, __LINE__, #a, va_, #b, vb_); }               \
  } while (0)

/* relative tolerance rel (absolute when expected is 0) */
#define CHECK_NEAR(a, b, rel)                                                              \
  do {                                                                                     \
    double va_ = (double)(a), vb_ = (double)(b);                                           \
    double tol_ = (vb_ == 0.0) ? (rel) : fabs(vb_) * (rel);                                \
    if (fabs(va_ - vb_) <= tol_) pf_check_pass++;                                          \
    else { pf_check_fail++; fprintf(stderr, "%s:%d: %s == %.9g, expected %s == %.9g (tol %.3g)\n", \
                                    __FILE__, __LINE__, #a, va_, #b, vb_, tol_); }         \
  } while (0)

#define CHECK_STR(a, b)                                                                    \
  do {                                                                                     \
    const char *va_ = (a), *vb_ = (b);                                                     \
    if (va_ && vb_ && strcmp(va_, vb_) == 0) pf_check_pass++;                              \
    else { pf_check_fail++; fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n",        \
                                    __FILE__, __LINE__, #a, va_ ? va_ : "(null)", vb_ ? vb_ : "(null)"); } \
  } while (0)

static inline int pf_check_done(void) {
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail ? 1 : 0;
}
#endif
