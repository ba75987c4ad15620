/* fit_int.h - internal: what the fit's driver (fit.c: rows into
 * configurations, which parameters the rows constrain, leave-one-out, bands)
 * and its least-squares engine (fit_lm.c: parameter coordinates, residuals,
 * Levenberg-Marquardt, the input rate's starts) share. */
#ifndef PREFLIGHT_FIT_INT_H
#define PREFLIGHT_FIT_INT_H

#include "validate.h"

#include <stdbool.h>
#include <stddef.h>

#define NPAR PF_FIT_NPAR
enum { P_COMPUTE, P_COMM, P_OVERHEAD, P_INPUT };

typedef struct pf_fitdata {
  pf_vset *s;
  int n;              /* rows used */
  int *row;           /* index into s->rows */
  int *grp;           /* configuration of each used row */
  int ngroups;
  pf_scenario *gsc;   /* one scenario per configuration */
  int nsub;           /* the current subset (all rows, or all but one configuration: leave-one-out) */
  int *sub;           /* indices into row[] */
  bool fixed[NPAR];   /* kept at u_fixed (not constrained, dropped, or the input term off) */
  double u_fixed[NPAR];
  bool input_off;     /* the fit leaves each scenario's input rate as it is (off unless given) */
  double tscale;      /* median measured iteration time, s: the overhead's coordinate scale */
  double rscale;      /* the input rate's coordinate scale, B/s (median of node_B / tmeas) */
  double *node_B;     /* per configuration: bytes one node reads per iteration (0: no sample bytes) */
  double *tmeas;      /* per used row: its measured iteration time, s (NAN unknown) */
  double *giter;      /* per configuration: predicted iteration time at the last residuals() */
  bool *gbind;        /* per configuration: the input pipeline bounded that step at the last residuals() */
  int evals;
  int err;            /* first prediction error */
} pf_fitdata;

/* Internal coordinates u -> physical parameters (clamped to their ranges). */
pf_fitparams pf_fit_params_of(const pf_fitdata *d, const double u[NPAR]);
/* u[k] for a physical value v (the inverse, unclamped). */
double pf_fit_coord(const pf_fitdata *d, int k, double v);
/* Is parameter k of p at the lower (-1) or upper (+1) end of its range? */
int pf_fit_at_bound(const pf_fitparams *p, int k);
/* Log residuals of the current subset at u (50 where a prediction fails);
 * fills giter and gbind. 0 or a PF_E* code. */
int pf_fit_residuals(pf_fitdata *d, const double u[NPAR], double *res);
/* Rows of the current subset whose step the input bounded at the last residuals(). */
int pf_fit_binding(const pf_fitdata *d);
/* Fit the current subset from u (in/out), the input rate from each of its
 * starts, keeping the best; sets d->input_off to the kept fit's.  start
 * names the kept start. 0 or a PF_E* code. */
int pf_fit_best(pf_fitdata *d, double u[NPAR], int *iters, char *status, size_t slen, char *start, size_t startlen);
double pf_fit_rms(const double *r, int n);

#endif
