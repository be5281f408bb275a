/*
 * client - how a client drives the suite: finding and running the
 * programs, sending typed commands, reading the projection, continuing
 * the agent; hw(1)'s workflows.
 */
#ifndef HW_CLIENT_H
#define HW_CLIENT_H

#include "agent/agent.h"

/* ---- the driver (driver.c): running programs and hw(1)'s workflows ---- */

/*
 * driver_find returns the path (malloc'd) of the program called name:
 * the one beside the running executable (/proc/self/exe) when it is an
 * executable file, else the first in PATH; NULL with code 69 if none.
 */
char *driver_find(const char *name);
/*
 * driver_exec replaces the process with program name (driver_find) run
 * with argv and the current environment, after flushing stdout.  It
 * returns -1 (hw_err set) only when that fails.
 */
int driver_exec(const char *name, char *const argv[]);
/*
 * driver_run runs program name with argv (no shell) and waits for it.
 * Its standard input is the n bytes of in, or ours when in is NULL; its
 * standard output is appended to out, or is ours (flushed first) when out
 * is NULL; its standard error is ours.  Returns its exit status (128 +
 * the signal that killed it), or -1 with hw_err set when it could not be
 * run (69) or talked to (74).
 */
int driver_run(const char *name, char *const argv[], const char *in,
    size_t n, struct buf *out);
/*
 * The workflows below return the exit status of the first program that
 * failed (0 when all succeeded), or -1 with hw_err set when the driver
 * itself failed.  Each program's output passes through to our stdout.
 *
 * driver_command sends one typed command of kind with payload (a JSON
 * object text) to session sid through "hw-session command": command_id
 * "SID-KIND-<32 random hex>", created_at now; its answer is printed.
 * A command recorded as not applied is -1, code 1, with the reason the
 * projection's lastCommandOutcome gives as the message.
 * driver_project returns session sid's projection, parsed into arena a,
 * or NULL with hw_err set (a failed hw-session keeps its exit status).
 */
int driver_command(const char *sid, const char *kind, const char *payload);
/*
 * driver_send is driver_command with the answer appended to ans (which
 * the caller owns) instead of printed; driver_continue runs "hw-agent run"
 * on sid (continue: the agent does what the session's events say is due,
 * or nothing) with its stdout appended to out (NULL: passed through), and
 * returns its exit status, or -1 when it could not be run.  The agent's
 * 75, another agent already running the session (which takes up what was
 * sent), is 0: hw-agent has said so on stderr.
 */
int driver_send(const char *sid, const char *kind, const char *payload,
    struct buf *ans);
int driver_continue(const char *sid, struct buf *out);
struct jval *driver_project(const char *sid, struct arena *a);
/*
 * driver_known is 0 when session sid exists, or is session-main (which
 * is Ready before its first command), else -1: code 66 "no session
 * 'SID'", or the store's own error.  It creates nothing.
 */
int driver_known(const char *sid);
/*
 * driver_ready checks that the agent could be run with a model route
 * (model_route_from_env), so that a prompt nobody can answer is not
 * recorded: 0, or -1 with code 70 and a message naming hw setup.
 */
int driver_ready(void);
/*
 * driver_text(show) makes ask, allow, reject, pause and resume print what a
 * person reads instead of the command's answer and the projection as JSON
 * lines: show gets the projection and the last event of the command (the
 * terminal's term_print: from that event on, hints naming hw allow and hw
 * reject).  hw(1) asks for it when stdout is a terminal and --json is not
 * given.
 */
typedef void (*driver_show_fn)(const char *sid, const struct jval *proj,
    int64_t since);
void driver_text(driver_show_fn show);
/*
 * driver_interrupted: why session sid takes no command (a command receipt
 * left "accepted": receipts_interrupted's message), malloc'd, or NULL
 * when nothing is interrupted or the session cannot be read.  Read-only.
 */
char *driver_interrupted(const char *sid);
/*
 * driver_ask sends a chat command with prompt; driver_decide sends kind
 * "approve" or "deny" for action set group (NULL: the pending one; none
 * pending is code 1, "No actions are awaiting review."); driver_resume
 * sends resume.  Once the command is applied each runs "hw-agent run"
 * (driver_continue) and prints the projection it left; the agent's status
 * comes first.  None of them holds the session's lease beyond the
 * programs it runs.
 */
int driver_ask(const char *sid, const char *prompt);
int driver_decide(const char *sid, const char *kind, const char *group);
int driver_resume(const char *sid);
/* driver_pause sends pause to session sid (driver_known first). */
int driver_pause(const char *sid);
/*
 * driver_status writes one canonical JSON line to out: sessionId,
 * researcherStatus and lifecycle from the projection, pendingApproval
 * as null or {groupId, actions: [{actionId, toolName, summary, risk}]},
 * and attention, null or driver_interrupted's reason.
 */
int driver_status(const char *sid, FILE *out);

#endif
