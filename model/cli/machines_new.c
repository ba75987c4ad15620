/* machines_new.c - `preflight machines new ID [--like EXISTING] [-o FILE]`:
 * a machine file to start from.  With --like, a copy of an existing machine
 * with the new id (every value still that machine's: edit them and their
 * provenance); without, a commented template of a 4-GPU node on a two-level
 * fat tree that loads as it is, every value marked "assumed" until replaced.
 * docs/machine-format.md describes every key; PREFLIGHT_MACHINES names the
 * folder preflight reads machines from (a copy of machines/ with yours added),
 * or give the file's path to --machine. */
#include "cli.h"
#include "options.h"

#include "core/core.h"
#include "machine/machine.h"
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skeleton =
    "# %s: written by `preflight machines new %s`.  Every value below is a placeholder (a 4-GPU H100 node on a\n"
    "# two-level InfiniBand fat tree) that loads as it is: replace each with your machine's figure and say where it\n"
    "# comes from in `provenance` (docs/machine-format.md describes every key; units are written out).\n"
    "machine = {\n"
    "  id = \"%s\";                    # must equal the file name (%s.cfg)\n"
    "  name = \"%s\";\n"
    "  site = \"unknown site\";\n"
    "  nodes = 64;                        # nodes in the partition\n"
    "  node = {\n"
    "    device = \"h100-sxm-80\";          # a file in machines/devices/ (`ls $PREFLIGHT_MACHINES/devices`)\n"
    "    devices = 4;                     # logical devices per node (GCDs on MI250X nodes)\n"
    "    cpu = { model = \"unknown CPU\"; sockets = 2; cores = 32; tdp = \"250 W\"; };\n"
    "    host_memory = \"512 GiB\";\n"
    "    fabric = {\n"
    "      kind = \"nvlink_mesh\";          # nvlink_switch | nvlink_mesh | infinity_fabric | xe_link | pcie | none\n"
    "      bandwidth = \"450 GB/s\";        # per GPU, per direction, all its GPU links together\n"
    "      pair_bandwidth = \"150 GB/s\";   # between one pair of GPUs, per direction\n"
    "      latency = \"2 us\";\n"
    "    };\n"
    "    host_link = { kind = \"pcie5\"; bandwidth = \"64 GB/s\"; };   # CPU <-> GPU, per direction\n"
    "    nics = { count = 4; rate = \"200 Gbps\"; };\n"
    "  };\n"
    "  network = {\n"
    "    topology = \"fat_tree\";           # %s\n"
    "    tech = \"InfiniBand NDR200\";\n"
    "    link_rate = \"400 Gbps\";          # one switch-to-switch link, per direction\n"
    "    switch_latency = \"130 ns\";\n"
    "    nic_latency = \"1.5 us\";\n"
    "    levels = 2;\n"
    "    endpoints_per_leaf = 32;\n"
    "    taper = 1.0;                     # leaf uplink / downlink bandwidth (1 = full bisection)\n"
    "    rail_optimized = false;\n"
    "  };\n"
    "  power = { node_base = \"600 W\"; pue = 1.2; switch = \"750 W\"; };\n"
    "  billing = { unit = \"node-hour\"; per_node_hour = 1.0; partial = \"node\"; note = \"assumed node-hours\"; };\n"
    "  # limits = { walltime = \"24 h\"; max_nodes = 64; note = \"where the site states it\"; };\n"
    "  # storage = { write_bandwidth = \"100 GB/s\"; };   # the parallel file system (checkpoints in `plan`)\n"
    "  provenance = (\n"
    "    \"assumed: every value is a placeholder from `preflight machines new`; replace it and cite its source\"\n"
    "  );\n"
    "};\n";

static int valid_id(const char *id) {
  if (!*id || strlen(id) >= PF_ID_MAX) return 0;
  for (const char *c = id; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.')) return 0;
  return 1;
}

/* The file of an existing machine with its id replaced. */
static int like(const char *id, const char *src_id, char **out) {
  pf_machine m;
  int rc = pf_machine_load(src_id, &m);
  if (rc < 0) return rc;
  char *text;
  size_t len;
  if ((rc = pf_read_file(m.path, 1 << 20, &text, &len)) < 0) return rc;
  char from[PF_ID_MAX + 16];
  snprintf(from, sizeof from, "\"%s\"", m.id);
  char *at = strstr(text, from);
  if (!at) { free(text); return pf_error_set(PF_EPARSE, "%s: no id \"%s\" to replace", m.path, m.id); }
  char *buf = NULL;
  size_t blen = 0;
  FILE *f = open_memstream(&buf, &blen);
  if (!f) { free(text); return pf_error_set(PF_ENOMEM, "out of memory"); }
  fprintf(f, "# %s: written by `preflight machines new %s --like %s` from %s.  Every value is still %s's:\n"
             "# replace those that differ and cite their source in `provenance` (docs/machine-format.md).\n",
          id, id, src_id, m.path, m.id);
  fwrite(text, 1, (size_t)(at - text), f);
  fprintf(f, "\"%s\"", id);
  fputs(at + strlen(from), f);
  fclose(f);
  free(text);
  *out = buf;
  return 0;
}

int pf_cli_machines_new(const pf_optvals *v, char **text) {
  *text = NULL;
  if (v->npositional != 2) return pf_error_set(PF_EINVAL, "give the new machine's id");
  const char *id = v->positional[1];
  if (!valid_id(id))
    return pf_error_set(PF_EINVAL, "\"%s\": an id is lower-case letters, digits, '-', '_' and '.'", id);
  const char *src = pf_opts_get(v, "like");
  if (src) return like(id, src, text);
  char kinds[512] = ""; /* the network kinds of the table (machine/network.h): "fat_tree | dragonfly | ..." */
  for (int i = 0; i < pf_net_kind_count(); i++) {
    size_t at = strlen(kinds);
    snprintf(kinds + at, sizeof kinds - at, "%s%s", i ? " | " : "", pf_net_kind_at(i)->name);
  }
  size_t n = strlen(skeleton) + 5 * strlen(id) + strlen(kinds) + 1;
  if (!(*text = malloc(n))) return pf_error_set(PF_ENOMEM, "out of memory");
  snprintf(*text, n, skeleton, id, id, id, id, id, kinds);
  return 0;
}
