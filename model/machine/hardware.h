/* hardware.h - accelerators, nodes, networks and billing, loaded from libconfig.
 *
 * A device file (machines/devices/ID.cfg) describes one logical accelerator as
 * the training framework sees it: an MI250X is two GCDs, so its file describes
 * one GCD and says dies_per_package = 2.  A machine file (machines/ID.cfg)
 * composes nodes from devices, an intra-node fabric, NICs and a network
 * topology.  The file format is documented in docs/machine-format.md; every
 * number carries its unit and its provenance lives in the file.
 */
#ifndef PREFLIGHT_HARDWARE_H
#define PREFLIGHT_HARDWARE_H

#include "core/core.h"

#include <stdbool.h>

#define PF_ID_MAX 64
#define PF_NAME_MAX 160
#define PF_PATH_MAX 1024
#define PF_MAX_GPN 72            /* logical devices (and NIC ports) per node at most: a GB200 NVL72 rack, whose 72
                                    GPUs are one NVLink domain, is one node (machines/gb200-nvl72.cfg) */
#define PF_CCL_MAX_EFF 8         /* library efficiency rows per machine */

typedef enum { PF_FP64, PF_FP32, PF_TF32, PF_FP16, PF_BF16, PF_FP8, PF_NPREC } pf_precision;

/* Unknown keys in machine, device and scenario files are errors with a "did
 * you mean" (default) or, when lenient (--lenient), warnings.  Process-wide. */
void pf_config_set_lenient(bool on);
bool pf_config_lenient(void);

/* "fp16" etc.; static. */
const char *pf_precision_name(pf_precision p);
/* Returns 0 or PF_EINVAL (detail lists valid names). */
int pf_precision_parse(const char *s, pf_precision *out);
/* Bytes of one element as stored for activations/weights in this precision. */
double pf_precision_bytes(pf_precision p);

#define PF_POWER_MAX_PARAMS 8     /* keys of a power model's own group in a device file */

/* One key of a device file's power.MODEL group, as written: the coefficients
 * of a power model other than the utilisation one (power/pmodel.h), which
 * this module reads without knowing the model (it lies below module power);
 * pf_power_check() checks them against the model's keys. */
typedef struct pf_power_param {
  char key[32];
  double value;                 /* SI (W for "450 W"), or the plain number */
  pf_unit_kind unit;            /* the kind its unit is; PF_UNIT_NONE for a plain number */
  int line;                     /* its line in the device file */
} pf_power_param;

/* A power model's name as a device file gives it (power.model = "NAME", and
 * its group power.NAME): letters, digits, '_' and '-', a letter first, below
 * PF_ID_MAX characters (a libconfig setting name). */
bool pf_power_model_name_ok(const char *s);

typedef struct pf_device {
  char id[PF_ID_MAX];
  char name[PF_NAME_MAX];
  char vendor[16];              /* "nvidia", "amd", "intel" */
  char arch[16];                /* "sm_80", "sm_90", "gfx90a", ... */
  double memory_B;              /* HBM capacity usable by one logical device */
  double memory_bw_Bps;         /* HBM bandwidth, datasheet */
  double l2_B;                  /* last-level cache */
  double peak_flops[PF_NPREC];  /* dense matrix (tensor-core) peak per precision; 0 = unsupported */
  double vector_flops[PF_NPREC];/* non-tensor FMA peak (fp64/fp32/fp16); 0 = unknown */
  int units;                    /* SMs (NVIDIA), CUs (AMD), Xe cores (Intel); 0 = unknown (no wave term) */
  double gemm_eff;              /* achievable fraction of peak for large GEMMs (best shape, MAMF) */
  double gemm_eff_fp8;          /* the same for fp8 (MAMF fp8); 0 = use gemm_eff */
  double gemm_half_dim;         /* reduction length k at which the fallback curve reaches half its top (gemm.h) */
  double attn_eff_fwd;          /* fused (flash) attention forward, fraction of the dense peak at long
                                   sequence and head dim 128; 0 = derived from gemm_eff (kernel.c) */
  double attn_eff_bwd;          /* the same for the backward kernel */
  double conv_eff;              /* implicit-GEMM convolution rate / GEMM rate of the same shape */
  const struct pf_gemm_table *gemm_table; /* measured GEMM table or NULL; borrowed from the
                                   process-wide registry in gemm.c (lives until exit) */
  double gemm_ceiling[PF_NPREC];/* a calibration's peak tensor kernel / dense peak, per GEMM class: no product of
                                   that class runs faster (calapply.c); 0 = none */
  double hbm_eff;               /* achievable fraction of memory_bw_Bps for streams */
  double kernel_launch_s;       /* launch floor: minimum GPU time of one kernel */
  double tdp_W;                 /* power cap of one logical device (package cap / dies) */
  double idle_W;                /* bare idle per logical device */
  double context_W;             /* idle with a context (waiting in collectives counts at least this) */
  double comm_W;                /* while running communication kernels only */
  double wait_W;                /* inside the step loop between kernels: waiting on the host, the input
                                   pipeline or a collective's peers (docs/energy.md, "Power between kernels") */
  double active_W;              /* the active floor: kernels of no tensor, vector or HBM load back to back
                                   (clocks and SMs up); the utilisation terms add to it (power/pm_util.c) */
  /* dynamic power above active_W at full utilisation of each resource (power/pm_util.c, docs/energy.md):
   * P = active + tensor_W u_tensor + vector_W u_vector + hbm_W u_hbm, u against the datasheet peaks */
  double tensor_W, vector_W, hbm_W;
  double package_W;             /* what shares the package cap outside this device (GH200: Grace CPU +
                                   LPDDR5X per module), charged at package and node scope; 0 = none */
  double cap_W;                 /* power cap of device + package_W (default tdp_W + package_W) */
  double v_floor;               /* DVFS: core voltage at and below half the clock, over the voltage at full
                                   clock (power/pm_util.c); 0 = the default */
  /* the power model (power/pmodel.h): tensor_W, vector_W, hbm_W and v_floor are the utilisation model's;
   * another model's coefficients are its power.MODEL group, read as written (devpower.c) */
  char power_model[PF_ID_MAX];  /* device.power.model; "" = the default (the utilisation model) */
  int power_model_line;         /* its line in the device file (0: not given) */
  int power_nparams;
  pf_power_param power_params[PF_POWER_MAX_PARAMS];
  char power_file[PF_PATH_MAX]; /* the device file they come from, for messages */
  int dies_per_package;         /* 2 for MI250X/MI250 (GCDs), 2 for Max 1550 (tiles), else 1 */
  bool calibrated;              /* rates were replaced by a calibration overlay */
  char calibration_source[PF_PATH_MAX];
} pf_device;

typedef enum { PF_FABRIC_NVLINK_SWITCH, PF_FABRIC_NVLINK_MESH, PF_FABRIC_INFINITY_FABRIC,
               PF_FABRIC_XE_LINK, PF_FABRIC_PCIE, PF_FABRIC_NONE } pf_fabric_kind;

/* The collective library the machine's training stack uses (ccl.library;
 * default by device vendor: NCCL on NVIDIA, RCCL on AMD, oneCCL on Intel). */
typedef enum { PF_CCL_NCCL, PF_CCL_RCCL, PF_CCL_ONECCL } pf_ccl_lib;
const char *pf_ccl_lib_name(pf_ccl_lib l);

/* A measured library behaviour that is not topology (ccl.efficiency rows):
 * from min_ranks ranks and min_bytes per rank on, the bandwidth of the
 * inter-node part of a collective is multiplied by factor.  Each row names
 * its source (machine file); the last matching row applies. */
typedef struct pf_ccl_eff {
  int min_ranks;
  double min_bytes;
  double factor;                /* (0, 1] */
  char source[PF_NAME_MAX];
} pf_ccl_eff;

/* The library's measured ring (ccl.table): what one step of its ring costs
 * on this machine with its network plugin and the plugin's settings, where
 * NCCL's tuning constants are not what the library delivers (RCCL on MI250X
 * over Slingshot).  Each figure is per ring step of one communicator, so it
 * applies to every concurrent group of a job alike; the bandwidth stays the
 * links' (shared by the groups, topology.c).  docs/communication.md 3.3. */
typedef struct pf_ccl_table {
  int present;
  char plugin[PF_NAME_MAX];     /* the network plugin and its settings the figures were measured with */
  double base_s;                /* per call */
  double fabric_step_s;         /* per ring step inside the node, Simple and LL128 (LL: NCCL's constant) */
  double net_step_s[3];         /* per ring step that crosses the network, before its transfer: LL, LL128, Simple */
  double net_floor_s[3];        /* least time of such a step (the handshake the transfer does not hide); 0 none */
  double ll_net_Bps;            /* per rank, the LL protocol's rate over the network (0: the links') */
  char source[PF_NAME_MAX];
} pf_ccl_table;

/* A network kind (fat tree, dragonfly, ...): the table of functions of
 * network.h, one file per kind (net_*.c). */
struct pf_net_kind;

const char *pf_fabric_kind_name(pf_fabric_kind k);
/* The kind's name as machine files write it ("fat_tree"); "?" for NULL. */
const char *pf_topology_kind_name(const struct pf_net_kind *k);

#define PF_NET_EXT_MAX 8

/* The machine's network: the keys every kind shares, then each built-in
 * kind's own (read and checked by its file, net_*.c). */
typedef struct pf_network {
  const struct pf_net_kind *kind; /* network.topology; static (the kind table, network.c) */
  char tech[PF_NAME_MAX];       /* "InfiniBand NDR200", "Slingshot-11" */
  double link_bw_Bps;           /* one switch-to-switch link, per direction */
  double switch_latency_s;      /* per switch hop */
  double nic_latency_s;         /* end-point (NIC + software) latency */
  bool in_network_reduction;    /* switches reduce (InfiniBand SHARP / CollNet) and the library uses it */
  /* fat tree (net_fat_tree.c) */
  int levels;                   /* 2 or 3 */
  int endpoints_per_leaf;       /* NIC ports per leaf switch */
  double taper;                 /* leaf uplink/downlink bandwidth ratio (1 = full bisection); dragonfly+ too */
  bool rail_optimized;          /* NIC k of every node lands on leaf set k */
  double core_taper;            /* 3 levels: aggregation uplink/downlink ratio (1 = full bisection) */
  /* dragonfly and dragonfly+ (net_dragonfly.c, net_dragonfly_plus.c) */
  bool adaptive_routing;        /* spread a hot group pair over Valiant detours */
  int groups;
  int switches_per_group;       /* dragonfly: switches per group (all-to-all inside) */
  int endpoints_per_switch;     /* dragonfly: NIC ports per switch; dragonfly+: per leaf */
  int leaves_per_group;         /* dragonfly+ */
  int spines_per_group;         /* dragonfly+ */
  double global_bw_per_group_Bps; /* all global links of one group together, per direction */
  /* torus (net_torus.c) */
  int dims[3];
  /* a kind registered from outside the built-in table keeps its parameters here (its file says what
   * each holds) */
  double ext[PF_NET_EXT_MAX];
} pf_network;

typedef struct pf_machine {
  char id[PF_ID_MAX];
  char name[PF_NAME_MAX];
  char site[PF_NAME_MAX];
  char path[PF_PATH_MAX];       /* file it was loaded from */
  int nodes;                    /* nodes in the partition */
  pf_device dev;                /* the node's accelerator (copied) */
  int gpus_per_node;            /* logical devices per node (GCDs for MI250X) */
  /* host */
  char cpu_model[PF_NAME_MAX];
  int cpu_sockets, cpu_cores;   /* cores per socket */
  double cpu_tdp_W;             /* per socket */
  double host_memory_B;
  /* intra-node fabric */
  pf_fabric_kind fabric;
  double fabric_bw_Bps;         /* per GPU, per direction, all its links together */
  double fabric_pair_bw_Bps;    /* between one pair of GPUs, per direction */
  double fabric_latency_s;
  double fabric_bridge_bw_Bps;  /* NVLink bridge between the cards of a bridged group, per direction (0: none) */
  bool fabric_sparse;            /* node.fabric.full_mesh = false: not every GPU pair is linked (MI250X) */
  int fabric_bridge_group;      /* GPUs per bridged group (2: pairs 0-1, 2-3, ...) */
  bool nvls;                    /* NVSwitch with in-switch reduction (NVLink SHARP, Hopper and later) */
  double nvls_eff;              /* share of the port line rate NVLS traffic reaches (measured; 0: the NVLink share) */
  double host_link_bw_Bps;      /* CPU <-> GPU per direction (PCIe or C2C) */
  char host_link[16];           /* its kind as the file names it ("pcie5", "c2c"), "" if not given */
  /* NICs */
  int nics_per_node;
  double nic_bw_Bps;            /* one NIC, per direction */
  int nic_affinity[PF_MAX_GPN]; /* NIC closest to each local GPU (default l x NICs / GPUs) */
  /* collective library */
  pf_ccl_lib ccl;
  int ccl_pxn;                  /* 1 PXN on, 0 off, -1 library default */
  char ccl_version[PF_ID_MAX];  /* ccl.version as the file names it ("2.18.3"); "" = not named */
  int ccl_neff;
  pf_ccl_eff ccl_eff[PF_CCL_MAX_EFF];
  pf_ccl_table ccl_table;       /* ccl.table; present = 0 when the file has none */
  /* measured link efficiencies from `calibrate --collectives` (--calibration; 0 = the defaults of topology.c) */
  double fabric_eff_cal, net_eff_cal;
  pf_network net;
  /* power */
  double node_base_W;           /* board, memory, fans, NICs, idle CPU: not the GPUs */
  double pue;
  double switch_W;              /* one network switch */
  /* billing */
  char billing_unit[32];        /* "node-hour", "GPU-hour", "core-hour" */
  double billing_per_node_hour; /* billed units per node-hour */
  char billing_note[PF_NAME_MAX];
  bool billing_per_device;      /* a job on part of a node is billed per device (else whole nodes) */
  /* the partition's job limits and storage, for `plan` (0 = not known) */
  double walltime_limit_s;      /* longest job of the main queue */
  int max_job_nodes;            /* most nodes one job may use */
  double storage_bw_Bps;        /* aggregate write bandwidth of the parallel file system */
  char limits_note[PF_NAME_MAX];/* where the limits come from */
  char provenance[2048];        /* short summary of sources */
} pf_machine;

/* Directory holding machine files: $PREFLIGHT_MACHINES, else the build-time
 * default (the source tree's machines/).  Static string. */
const char *pf_machines_dir(void);

/* Load a machine by id (machines/ID.cfg) or by a path ending in .cfg.
 * Errors: PF_ENOENT (detail lists valid ids), PF_EPARSE / PF_EUNIT (detail
 * names file:line and field). */
int pf_machine_load(const char *id_or_path, pf_machine *out);
int pf_device_load(const char *id_or_path, pf_device *out);

/* Sorted list of machine ids found in pf_machines_dir(). Caller frees with
 * pf_strlist_free(). */
int pf_machine_list(char ***ids, int *n);
int pf_device_list(char ***ids, int *n);
void pf_strlist_free(char **ids, int n);

/* Peak FLOP/s for training in precision p (fp32 uses tf32 tensor cores only if
 * asked with PF_TF32). */
double pf_device_peak(const pf_device *d, pf_precision p);

#endif
