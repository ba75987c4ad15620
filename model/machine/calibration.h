/* calibration.h - measured device rates (calibration JSON) overlaid on a machine.
 *
 * `preflight calibrate` writes a schema-versioned JSON document (docs/calibration.md).
 * pf_calibration_load() reads one; pf_calibration_apply() replaces the datasheet
 * defaults of the machine's device with what was measured: achievable GEMM and
 * HBM efficiencies (measured median / datasheet peak, so MFU stays against the
 * datasheet), launch latency, and power coefficients when present.  The same
 * file format carries the efficiency parameters fitted by `validate --fit`
 * (section "fit"), which predict applies on top.
 */
#ifndef PREFLIGHT_CALIBRATION_H
#define PREFLIGHT_CALIBRATION_H

#include "gemmtab.h"
#include "hardware.h"

#include <stddef.h>
#include <stdbool.h>

#define PF_CALIBRATION_SCHEMA 1

typedef struct pf_calibration {
  int schema_version;
  char path[PF_PATH_MAX];
  char backend[16];                 /* "cpu", "cuda", "hip", "fit" */
  char device_name[PF_NAME_MAX];
  char arch[16];                    /* device.arch ("sm_90", "gfx90a"); "" = not given */
  double memory_B;                  /* device.memory_B: the measured part's memory, 0 = not given */
  /* measured medians, SI; 0 = not measured */
  double tensor_flops[PF_NPREC];
  double vector_flops[PF_NPREC];
  double hbm_read_Bps, hbm_write_Bps, hbm_copy_Bps, hbm_triad_Bps;
  double launch_s;
  /* results.host (`calibrate --host`): host CPU time of an eager PyTorch forward operator and of an autograd
   * backward node, measured with a tiny script on the node (0 = not measured) */
  double host_fwd_op_s, host_bwd_op_s;
  double h2d_Bps, d2h_Bps, d2d_Bps;
  double link_alpha_s, link_beta_Bps; /* fitted alpha-beta of device<->device */
  double idle_W, context_W, max_W;  /* power states measured, 0 = not measured (max_W: the highest point seen) */
  double power_cap_W;               /* device.power_cap_W: the cap the driver reported, 0 = not given */
  /* power_model.coefficients (docs/energy.md): dynamic W at full tensor, HBM, vector utilisation */
  bool has_power_coef;
  double power_tensor_W, power_hbm_W, power_vector_W;
  /* vendor-library GEMM table (results.gemm, written by calibrate --gemm) */
  int units;                        /* device.units: SMs/CUs of the measured part, 0 = not given */
  int gemm_n;                       /* rows, 0 = none */
  const pf_gemm_sample *gemm;       /* borrowed: kept by calibration.c until exit */
  double gemm_overhead_s;           /* per-call time in the rows besides the kernel (0: kernel only) */
  char gemm_library[64];            /* "cublasLt 13.0.0", "rocblas 4.1" */
  /* efficiency parameters fitted to a user's runs (validate --fit) */
  bool has_fit;
  double fit_compute_eff;           /* multiplies achievable compute rate (1 = unchanged) */
  double fit_comm_eff;              /* multiplies achievable network/fabric bandwidth */
  double fit_step_overhead_s;       /* added once per iteration */
  double fit_input_rate_Bps;        /* bytes/s a node's loaders deliver (input pipeline), 0 = not fitted */
  double fit_rel_sigma;             /* relative residual spread of the fit, for bands */
  double fit_max_nodes;             /* the largest node count of the fitted runs (0: not given) */
  char fit_machines[512];           /* machines a fit was made on ("a,b"; "" unknown) */
} pf_calibration;

/* Parse a calibration JSON file. Errors name the file and the field:
 * PF_ENOENT, PF_EPARSE (bad JSON or field), PF_EINVAL (schema_version). */
int pf_calibration_load(const char *path, pf_calibration *out);

/* Is the calibration for this machine?  A measurement must name a device
 * that looks like the machine's, a fit must list the machine among those it
 * was fitted on.  false with the reason in why. */
bool pf_calibration_matches(const pf_calibration *c, const pf_machine *m, char *why, size_t whylen);

/* Overlay measured rates on m->dev (and fit parameters on the machine's
 * efficiencies). Warns (returns 0) when the device name does not match.
 * A GEMM table (results.gemm) replaces the device's table and sets the
 * large-GEMM efficiencies (gemm_eff, gemm_eff_fp8) to the best measured row:
 * the vendor library is the ceiling, not the instruction kernel. */
int pf_calibration_apply(const pf_calibration *c, pf_machine *m);

#endif
