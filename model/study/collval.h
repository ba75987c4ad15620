/* collval.h - measured collectives against the communication model:
 * `preflight validate` on a collective CSV (scenarios/validation/
 * collectives.csv) or on a user's nccl-tests / rccl-tests output.
 *
 * A collective CSV holds one measured point per row:
 *   machine, op, nodes, gpus_per_node, size_B, algorithm, metric, value,
 *   unit, bound, value_hi, use, source, notes
 * op is nccl-tests' name (all_reduce, all_gather, reduce_scatter, alltoall,
 * sendrecv); algorithm is empty for the library's own choice or names the
 * one the run forced (NCCL_ALGO); metric is busbw (GB/s), algbw (GB/s) or
 * time_us; bound as validation CSVs (empty: exact; lower, upper, range with
 * value_hi).  Errors are relative, (predicted - measured) / measured, 0
 * inside a bound.  A nccl-tests / rccl-tests output file gives one row per
 * size line (out-of-place busbw; the time where busbw is below 1 GB/s, as
 * the output prints busbw to 0.01 GB/s); its op comes from the file's header
 * or name, its rank and node counts from the "# Rank" lines unless given.
 */
#ifndef PREFLIGHT_COLLVAL_H
#define PREFLIGHT_COLLVAL_H

#include "comm/comm.h"
#include "validate.h"

typedef enum { PF_CMET_BUSBW, PF_CMET_ALGBW, PF_CMET_TIME } pf_cmetric;

typedef struct pf_cvrow {
  int line;
  char machine[PF_ID_MAX];
  pf_coll_kind op;
  int nodes, gpn;
  double size_B;
  pf_coll_algo algo;          /* PF_COLL_AUTO: the library's choice */
  pf_cmetric metric;
  double measured, measured_hi; /* GB/s or us, as written */
  pf_bound bound;
  char use[8];
  char source[PF_VTEXT];
  char notes[PF_VTEXT];
  /* results */
  double predicted;           /* same unit as measured */
  double error;               /* signed relative error, 0 inside a bound */
  pf_coll_algo pred_algo;
  pf_coll_proto pred_proto;
  int ok;                     /* predicted */
  char reason[PF_VTEXT];
} pf_cvrow;

typedef struct pf_cvset {
  char path[PF_PATH_MAX];
  int n;
  pf_cvrow *rows;             /* owned */
} pf_cvset;

/* The file looks like a collective CSV (a header with op and size_B) or
 * like nccl-tests / rccl-tests output ("#  nThread" or a "#  size  count"
 * header): 1 CSV, 2 nccl-tests, 0 neither. */
int pf_collval_kind(const char *path);

/* Read a collective CSV; malformed rows are PF_EPARSE naming file:line:field
 * (PF_ENOENT for an unknown machine).  Free with pf_cvset_free(). */
int pf_collval_read_csv(const char *path, pf_cvset *out);
/* Read nccl-tests / rccl-tests output for machine (nodes, gpn: 0 = from the
 * file's "# Rank" lines).  PF_EPARSE when no result line is found. */
int pf_collval_read_nccltests(const char *path, const char *machine, int nodes, int gpn, pf_cvset *out);
void pf_cvset_free(pf_cvset *s);

/* Predict every row (rows that fail are marked with the reason). */
int pf_collval_run(pf_cvset *s);

/* |error| x 100 statistics over predicted rows; with min_size > 0 only rows
 * at least that large. */
pf_vstats pf_collval_stats(const pf_cvset *s, double min_size);

const char *pf_cmetric_name(pf_cmetric m);

#endif
