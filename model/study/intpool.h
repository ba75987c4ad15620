/* intpool.h - the pool of validation rows behind the prediction intervals
 * (interval.h): each judged row with its regime key, predicted on demand.
 * Internal to the study module (interval.c, intpool.c, intcover.c). */
#ifndef PREFLIGHT_INTPOOL_H
#define PREFLIGHT_INTPOOL_H

#include "interval.h"

#include <stdint.h>

/* The features of a regime (interval.h): bits of a mask say which ones a level of the ladder keeps. */
/* PF_RK_FAMILY: dense and mixture-of-experts transformers as one (the ladder's rung before every run) */
enum { PF_RK_KIND = 1, PF_RK_VENDOR = 2, PF_RK_ARCH = 4, PF_RK_SIZE = 8, PF_RK_SCALE = 16, PF_RK_FAMILY = 32 };
/* The classes of rows: time and throughput, scaling efficiency and batch ratios, energy and mean power
 * (measured over a job's measured duration: the time held, docs/energy.md "Ranges"). */
enum { PF_ICLASS_TIME = 0, PF_ICLASS_EFF = 1, PF_ICLASS_POWER = 2 };

typedef struct pf_rkey {
  int kind;                     /* 0 dense transformer, 1 CNN, 2 other, 3 mixture-of-experts transformer */
  char vendor[16], arch[16];    /* the device's */
  int size;                     /* 0: < 1e9 parameters, 1: 1e9 to 3e10, 2: >= 3e10 */
  int scale;                    /* 0: one node, 1: 2-16 nodes, 2: more than 16 */
} pf_rkey;

typedef struct pf_irow {
  pf_vrow r;                    /* the row; status, predicted and error once predicted */
  int file, group, cls;
  bool keyed;                   /* its scenario was built and its key found */
  bool done;                    /* pf_validate_run has run on it */
  int nodes;                    /* its scenario's node count */
  pf_rkey k;
} pf_irow;

#define PF_IPOOL_FILES 64
#define PF_IFAMILY_MAX (64 + 4 + PF_ID_MAX) /* "FAMILY on MACHINE" */

struct pf_ipool {
  const pf_validate_opts *vo;
  int n;
  pf_irow *rows;                /* owned */
  int nfiles;
  char files[PF_IPOOL_FILES][PF_PATH_MAX]; /* paths, in name order */
  bool cached[PF_IPOOL_FILES];  /* the file's predictions are kept on disk (vdisk.h), under key */
  uint64_t key[PF_IPOOL_FILES];
  int ngroups;
  char group_source[PF_ICOVER_MAX][64], group_family[PF_ICOVER_MAX][PF_IFAMILY_MAX];
};

/* The regime key of a scenario (its own node count). */
void pf_rkey_of(const pf_scenario *sc, pf_rkey *k);
bool pf_rkey_match(const pf_rkey *a, const pf_rkey *b, unsigned mask);
/* "transformer, AMD gfx90a, 1-30 B parameters, 2-16 nodes": the features mask keeps. */
void pf_rkey_describe(const pf_rkey *k, unsigned mask, char *buf, size_t len);
/* Predict the rows idx[0..n) not yet predicted (over all cores). 0 or PF_ENOMEM. */
int pf_ipool_predict(pf_ipool *p, const int *idx, int n);
/* r of a predicted row (interval.h), NAN when it has none. */
double pf_irow_ratio(const pf_irow *x);
/* The 10th and 90th percentile of r over the rows of class cls nearest to k (the ladder), leaving out
 * group skip (-1: none); *n rows used, regime named in regime.  lo <= 1 <= hi.  With doubling: of the
 * scaling rows' ln r per doubling of scale instead (lo <= 0 <= hi). */
int pf_interval_class(pf_ipool *p, const pf_rkey *k, int cls, int skip, bool doubling, double *lo, double *hi,
                      int *n, double *ref_nodes, char *regime, size_t len);
/* The time factors of a prediction at nodes: the time rows' interval (pf_interval_class; their median node
 * count N), widened beyond N by the scaling rows' error per doubling over log2(nodes / N) doublings, the two
 * independent in log space (interval.h). */
int pf_interval_time(pf_ipool *p, const pf_rkey *k, int nodes, int skip, double *lo, double *hi, int *n,
                     char *regime, size_t len);

#endif
