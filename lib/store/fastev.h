/* fastev.h - a canonical session event without a tree (fastev.c) */
#ifndef STORE_FASTEV_H
#define STORE_FASTEV_H

#include "base/base.h"

struct span {
	const char *s;		/* in the line */
	size_t n;
};

/* the minimized payload's members, but the event's hash */
#define FASTEV_OUT 8
/* the members of its sub-objects, all together */
#define FASTEV_SUB 16

struct fastev_out {
	const char *key;
	size_t kn;		/* its length */
	struct span val;	/* its canonical text, unless obj */
	int obj;		/* an object of the nsub members of f->sub */
	size_t sub, nsub;	/* from sub on */
};

struct fastev {
	struct span kind, occurred_at, payload, prev, seq, sid;
	int64_t seqn;
	struct fastev_out out[FASTEV_OUT];
	size_t nout;
	struct fastev_out sub[FASTEV_SUB];
	size_t nsub;
	char digits[FASTEV_OUT][24];	/* counts' text */
	char subdigits[FASTEV_SUB][24];
	int64_t subcount[FASTEV_SUB];	/* a plan's tasks of each status */
	struct span cid;	/* a command.received's command_id, a string
				   without escapes, unquoted (s NULL: none) */
	const struct jtextmember *pm;	/* the payload's members, as the
					   canonical scan noted them (NULL:
					   read them from the text) */
	size_t npm;
};

/*
 * fastev_check is 1 when line (n bytes) is an event that check_event
 * takes, of session sid at sequence seq, canonical as it stands (so that
 * its hash is the hash of its bytes), and of a kind whose minimization
 * fastev knows; f then holds what fastev_record and fastev_prev need (the
 * line must stay), and in cid the id a command.received adds to the
 * session's command filter (bloom_note_id).  0 says nothing about the
 * line: check_event decides, and gives any error.
 */
int fastev_check(struct fastev *f, const char *line, size_t n,
    const char *sid, int64_t seq);
/*
 * fastev_check_at is fastev_check for a line whose eight members' values
 * are known to be at off[i], len[i] bytes, in the order of their keys,
 * and which json_canon_ascii is known to take: session_commit's event
 * line made by draft_event_line (which says where the values are) from a
 * draft json_parse_canon found canonical with no escape in a key
 * (t/fuzz/draftline_fuzz holds both).  It checks the values as
 * fastev_check does, without reading the line around them.
 */
int fastev_check_at(struct fastev *f, const char *line, size_t n,
    const size_t off[8], const size_t len[8], const char *sid, int64_t seq);
/*
 * fastev_record appends to rec what audit_canon would for the checked
 * event with hash ehash (placeholder digits allowed), and returns where
 * the hash's digits are in rec, and sets *prev_at (when not NULL), as
 * audit_canon does.
 */
size_t fastev_record(struct fastev *f, const char *sid, const char *ehash,
    struct buf *rec, size_t *prev_at);
/*
 * fastev_prev: the event's previous_event_hash, "" for null, "?" for a
 * string that is no hash (it follows no chain head).
 */
void fastev_prev(const struct fastev *f, char prev[HW_HASH_LEN + 1]);

#endif
