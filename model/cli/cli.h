/* cli.h - the preflight command-line front end: one function per sub-command.
 * Each returns a process exit status (0, 1, 2, 3) and prints results on
 * stdout, diagnostics on stderr. */
#ifndef PREFLIGHT_CLI_H
#define PREFLIGHT_CLI_H

#include <stddef.h>

int pf_cmd_machines(int argc, char **argv);
int pf_cmd_models(int argc, char **argv);
int pf_cmd_predict(int argc, char **argv);
int pf_cmd_kernels(int argc, char **argv);
int pf_cmd_sweep(int argc, char **argv);
int pf_cmd_plan(int argc, char **argv);
int pf_cmd_tune(int argc, char **argv);
int pf_cmd_compare(int argc, char **argv);
int pf_cmd_calibrate(int argc, char **argv);
int pf_cmd_validate(int argc, char **argv);
int pf_cmd_collective(int argc, char **argv);
int pf_cmd_merge(int argc, char **argv);
/* `calibrate --collectives` (calibrate_ccl.c), called by pf_cmd_calibrate */
int pf_cmd_calibrate_collectives(int argc, char **argv);
/* The path of the calibration back-end executable preflight-cal-WHICH: in $PREFLIGHT_CAL_DIR, else next to
 * this program (calibrate_ccl.c). */
void pf_cli_cal_exe(const char *which, char *exe, size_t n);
/* `calibrate --host` (calibrate_host.c), called by pf_cmd_calibrate */
int pf_cmd_calibrate_host(int argc, char **argv);
/* `machines new` (machines_new.c): the new machine file's text from the
 * parsed options (caller frees); a PF_E* code on error. */
struct pf_optvals;
int pf_cli_machines_new(const struct pf_optvals *v, char **text);

struct pf_cli;
/* validate on a collective CSV (kind 1) or nccl-tests / rccl-tests output (kind 2): validate_coll.c */
int pf_cli_validate_collectives(struct pf_cli *cli, const char *path, int kind);

/* Report an error code with its detail on stderr as "preflight CMD: detail"
 * (a JSON document when the command was asked for --format json), and return
 * the exit status for it (options.c). */
int pf_cli_fail(const char *cmd, int code);

#endif
