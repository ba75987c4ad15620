/* sgsetup.h - private: start SimGrid the one way this project runs it.
 *
 * The settings that matter (shared/research/simgrid-notes.md): the CM02 network
 * model with cross-traffic off gives the exact alpha-beta cost of a flow; a huge
 * TCP-gamma removes the TCP window cap on long routes; logs are silenced below
 * critical so nothing reaches our stdout/stderr.  Call once per process (the
 * engine is global), in the fork()ed child that runs the simulation.
 */
#ifndef PF_SGSETUP_H
#define PF_SGSETUP_H

#include <simgrid/comm.h>
#include <simgrid/mailbox.h>

/* Initialise SimGrid with our settings and load the platform XML file at
 * `platform` (then unlinks it).  stack_kib: actor stack size. */
void pf_simgrid_start(const char *platform, int stack_kib);

/* Every actor calls this as its last statement: the run counts the actors that finished. */
void pf_simgrid_actor_done(void);

/* simgrid_run(), then how many of the `actors` created never finished: SimGrid ends a run whose actors all
 * wait (a deadlock: "Oops! Deadlock detected", silenced) by killing them, and what they had not done is
 * missing from the times, so a positive count is an engine failure, never a result (issue 30).
 * Test hook (tests/robustness/cases.txt, docs/exit-codes.md): PREFLIGHT_TEST_SIMGRID_DEADLOCK=1 (or the
 * engine's name, "pipeline" or "full") makes the first actor to finish wait instead on a mailbox no actor
 * sends to, a real SimGrid deadlock. */
int pf_simgrid_run(const char *engine, int actors);

/* Megatron's blocking P2P exchange (pipeline.h pf_pipeline_blocking_p2p), for both engines: wait for the
 * previous operation's send (*pend, rendezvous; cleared) and this operation's receive from `in` (NULL: none)
 * together, then sleep `recv` (the receiver's gather of the TP pieces) if something was received. */
void pf_simgrid_exchange(sg_comm_t *pend, sg_mailbox_t in, double recv);

#endif
