/* main.c - the preflight command: signal handling (interrupt.h), the progress
 * bar switch, and dispatch to sub-commands.  Exit codes: docs/exit-codes.md. */
#include "cli.h"
#include "options.h"

#include "core/core.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

static const pf_cli_command commands[] = {
    {"machines", pf_cmd_machines, "list machines; `machines show ID`", &pf_cli_spec_machines},
    {"models", pf_cmd_models, "list built-in workloads; `models show ID`", &pf_cli_spec_models},
    {"predict", pf_cmd_predict, "one configuration -> time, throughput, memory, energy", &pf_cli_spec_predict},
    {"kernels", pf_cmd_kernels, "every kernel of one GPU's iteration: time, bound and source", &pf_cli_spec_kernels},
    {"sweep", pf_cmd_sweep, "the same job over node counts (weak or strong scaling)", &pf_cli_spec_sweep},
    {"tune", pf_cmd_tune, "best parallel configuration (TP, PP, micro-batch, recompute, schedule) that fits",
     &pf_cli_spec_tune},
    {"compare", pf_cmd_compare, "the same job on several machines", &pf_cli_spec_compare},
    {"plan", pf_cmd_plan, "GPU-hours, node-hours, billing units, wall time and MWh for a training run",
     &pf_cli_spec_plan},
    {"calibrate", pf_cmd_calibrate, "measure what this node's devices deliver", NULL},
    {"validate", pf_cmd_validate, "predicted vs measured runs, error statistics", &pf_cli_spec_validate},
    {"collective", pf_cmd_collective, "a machine's collectives priced alone, printed as nccl-tests prints them",
     &pf_cli_spec_collective},
    {"merge", pf_cmd_merge, "join the shards of a sweep or tune (--shard I/N) into one result", &pf_cli_spec_merge},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  fprintf(f, "preflight %s - predict time, memory and energy of deep-learning training on HPC machines\n\n"
             "usage: preflight COMMAND [options]   (preflight COMMAND --help for details)\n\ncommands:\n",
          pf_version());
  for (int i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\noptions:\n  --help     this help (COMMAND --help: the command's options and examples)\n"
             "  --version  the version and the git description of the build\n");
  fprintf(f, "\nexamples:\n"
             "  preflight machines\n"
             "  preflight predict --machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 \\\n"
             "      --precision fp16 --sp --dist-opt --recompute selective\n"
             "  preflight sweep --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --grad-accum 192 --precision fp16 \\\n"
             "      --sp --dist-opt --recompute selective --nodes 16,32,64 --scaling weak\n");
}

int main(int argc, char **argv) {
  if (pf_interrupt_install() < 0) {
    fprintf(stderr, "preflight: %s\n", pf_error_detail());
    return 2;
  }
  pf_progress_enable(true);
  if (argc < 2) { usage(stderr); return 2; }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) { printf("preflight %s (%s)\n", pf_version(), pf_git()); return 0; }
  /* not listed: the build writes the man page and the completion with them (gendoc.c) */
  if (strcmp(argv[1], "--man") == 0) { pf_cli_man(stdout, commands, NCOMMANDS); return 0; }
  if (strcmp(argv[1], "--completion") == 0)
    return pf_cli_completion(stdout, argc > 2 ? argv[2] : "", commands, NCOMMANDS);
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(argv[1], commands[i].name) == 0) {
      return commands[i].fn(argc - 2, argv + 2);
    }
  const char *names[NCOMMANDS];
  for (int i = 0; i < NCOMMANDS; i++) names[i] = commands[i].name;
  char near[256];
  if (pf_suggest(argv[1], names, NCOMMANDS, near, sizeof near) > 0)
    fprintf(stderr, "preflight: unknown command \"%s\"; %s (run `preflight --help` for the list)\n", argv[1], near);
  else
    fprintf(stderr, "preflight: unknown command \"%s\" (run `preflight --help` for the list)\n", argv[1]);
  return 2;
}
