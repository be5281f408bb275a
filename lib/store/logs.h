/*
 * logs.h - the log reader and the verifier's state, shared by logs.c
 * (verification), head.c, recover.c, commit.c, receipt.c and tail.c only
 */
#ifndef HW_STORE_LOGS_H
#define HW_STORE_LOGS_H

struct reader {
	struct jsonl r;
	int fd;
	int more;		/* a complete line is in line/len */
	char *line;
	size_t len;
};

struct vstate {
	struct session *s;
	struct arena a;
	struct buf scratch;
	struct buf evline;	/* canonical form of the last event */
	int64_t i;
	char head[HW_HASH_LEN + 1];
	char ehash[HW_HASH_LEN + 1];
	struct jval *ev;	/* the last event parsed, in a */
	audit_fn afn;		/* optional: each verified audit record */
	void *actx;
	int defer_head;		/* check_event leaves the head check */
	int defer_hash;		/* ... and the hash of a canonical event */
	int hash_later;		/* it did: ehash is a placeholder */
	struct cmd_bloom commands;	/* ids of the command.received seen */
};

int reader_open(struct reader *rd, const char *path, const char *name);
int reader_next(struct reader *rd);
void reader_close(struct reader *rd);
int seqerr(struct vstate *v, const char *fmt, ...);
/*
 * parse_record parses the reader's line; *fast is set when the line is
 * already canonical and complete (nkeys members, no defaults to fill), so
 * that its bytes are the record's canonical form.
 */
struct jval *parse_record(struct vstate *v, struct reader *rd,
    const char *format, size_t nkeys, int *fast);
/*
 * check_event validates the event at v->i; against the chain head too,
 * unless v->defer_head (the head is then checked by whoever knows it).
 */
int check_event(struct vstate *v, struct reader *rd);
int check_audit(struct vstate *v, struct reader *rd);
void vstate_init(struct vstate *v, struct session *s);
void vstate_release(struct vstate *v);
int walk(struct vstate *v, struct reader *er, struct reader *ar, int strict,
    event_fn fn, void *ctx);

/* the verified head (head.c): .verified-head.json in the session directory */
#define HEAD_SCHEMA "heartwood.verified-head.v1"
/* head_load: 0 with *p when the file is ours, whole, of this version and
   session; -1 (no error set) otherwise: it is then ignored */
int head_load(struct session *s, struct logpos *p);
/* head_save replaces the file atomically and durably */
int head_save(struct session *s, const struct logpos *p);
/* bloom_note adds ev's command_id when ev is a command.received */
void bloom_note(struct cmd_bloom *f, const struct jval *ev);
/* bloom_note_id adds an id, the n bytes at s (a string's decoded bytes) */
void bloom_note_id(struct cmd_bloom *f, const char *s, size_t n);
int bloom_has(const struct cmd_bloom *f, const struct jval *cid);
void bloom_or(struct cmd_bloom *to, const struct cmd_bloom *from);
/* logpos_take: where v stands, its logs verified up to the offsets */
int logpos_take(struct logpos *p, const struct vstate *v, int efd, off_t eoff,
    int afd, off_t aoff);

#endif
