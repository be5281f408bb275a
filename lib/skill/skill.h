/*
 * skill - Agent Skills: a skill directory's validation (SKILL.md and its
 * frontmatter, the tree rules), its exact tree digest, and the project's
 * installed skills: the approval-bound install of a local skill, the
 * index, removal, and the chained installation log.  Uses base, store
 * (the standalone chained log) and tuf.
 *
 * Errors follow base: -1 with hw_err_set; a skill that breaks a rule is
 * 65, a digest that is not the approved one 1.
 */
#ifndef HW_SKILL_H
#define HW_SKILL_H

#include <sys/types.h>

#include "base/base.h"

/* The bounds of §3.1 of the reference. */
#define SKILL_MAX_FILES 256
#define SKILL_MAX_FILE (8u << 20)
#define SKILL_MAX_TOTAL (64u << 20)
#define SKILL_MAX_ARCHIVE (72u << 20)

/* One regular file of a skill tree. */
struct skill_file {
	char *path;			/* relative, '/'-separated, UTF-8 */
	const char *role;		/* definition, script, reference ... */
	int executable;			/* any of the 0111 bits */
	uint64_t size;
	char sha256[SHA256_HEX + 1];
	/* what was read, for a later copy to check against */
	dev_t dev;
	ino_t ino;
	struct timespec mtime, ctime;
};

/* A skill directory, inspected. */
struct skill_tree {
	struct skill_file *files;	/* sorted as the digest sorts them */
	size_t n;
	uint64_t total;
	char tree_sha256[SHA256_HEX + 1];
};

/*
 * skill_tree_read walks the directory dirfd (not closed) and reads every
 * file once, refusing (65) what §3.1 refuses: symlinks, special files,
 * hard links, a ".git" component, an executable outside scripts/, two
 * paths equal after case folding (glibc's C.UTF-8 towlower, which is
 * simple folding: "ß" and "ss" do not collide), a name that is not UTF-8,
 * more than 256 files, a file over 8 MiB, 64 MiB in all, and a file that
 * changed while it was read (device, inode, size, mtime and ctime before
 * and after).  Fills t (release with skill_tree_release), with the tree
 * digest of §3.2.  what names the directory in errors.
 */
int skill_tree_read(int dirfd, const char *what, struct skill_tree *t);
void skill_tree_release(struct skill_tree *t);
/*
 * skill_tree_json appends the digest's array (the files as the digest
 * serializes them) to b, canonical JSON.
 */
void skill_tree_json(const struct skill_tree *t, struct buf *b);
/* skill_path_cmp: the digest's order, component by component, by byte. */
int skill_path_cmp(const char *a, const char *b);

/* ---- SKILL.md (front.c) ---- */

/* The frontmatter of a SKILL.md, checked (strings in the arena). */
struct skill_meta {
	const char *name, *description, *license, *compatibility;
	const char **tools;		/* allowed-tools */
	size_t ntools;
	struct jval *metadata;		/* the metadata map, strings */
	struct jval *policy;		/* heartwood.skill-policy.v1 */
	const char *body;
};

/*
 * skill_meta_parse parses the n bytes of a SKILL.md: "---" lines around a
 * YAML frontmatter of the subset skills use (top-level "key: value"
 * pairs, plain or quoted scalars, one level of block map or list, flow
 * lists), then checks every field of §3.1 and builds the policy.  A
 * body with "!`" (dynamic shell context) is refused.  NULL-free: 0 or -1
 * (65) with the reason.
 */
int skill_meta_parse(struct arena *a, const char *s, size_t n,
    struct skill_meta *m);

/* skill_yaml: frontmatter text (n bytes) as a JSON object, or NULL (65) */
struct jval *skill_yaml(struct arena *a, const char *s, size_t n);

/* ---- a skill directory, validated (validate.c) ---- */

struct skill_info {
	struct arena a;
	struct skill_meta meta;
	struct skill_tree tree;
};
/*
 * skill_inspect reads and validates the skill directory path (whose last
 * component must equal the skill's name): the tree, SKILL.md, no
 * .mcp.json, an entrypoint that is one of its files.  Release with
 * skill_info_release.
 */
int skill_inspect(const char *path, struct skill_info *si);
void skill_info_release(struct skill_info *si);
/*
 * skill_info_json appends the inspection as one canonical JSON object:
 * name, skill_id, version, description, license, compatibility,
 * allowed_tools, policy, files, file_count, total_size, tree_sha256,
 * review, and as a summary source "local-candidate", status "available",
 * compatibility_reason and installable (compatible here).
 */
void skill_info_json(const struct skill_info *si, const char *review,
    struct buf *b);
/*
 * skill_compatible: NULL when the skill may run here, else why not: this
 * platform (uname's system, lowercased) or "generic" must be among its
 * platforms, it must not require the network, and it may declare no tool
 * but terminal.
 */
const char *skill_compatible(const struct skill_info *si);
/* skill_parse_digest: 64 lowercase hex, "sha256:" allowed before; 0/-1 */
int skill_parse_digest(const char *s, char out[SHA256_HEX + 1]);

/* ---- the project's installed skills (install.c) ---- */

#define SKILL_LOG ".heartwood/audit/skill-installations.jsonl"
#define SKILL_INDEX ".heartwood/skills/index.json"
#define SKILL_LOG_ID "project-skills"

/*
 * skill_local_install installs the local skill directory path, which must
 * lie inside the project (the current directory) and outside .heartwood,
 * when its tree digest equals expected; under the lifecycle lock: the
 * decision is recorded in the installation log first (a denial too), each
 * file is copied with exclusive create and checked against what was
 * inspected, the copy is inspected again, renamed into
 * .heartwood/skills/artifacts/sha256/TREE/NAME/, added to the index and
 * logged as skill.activated (skill.installation-failed on a failure
 * after the decision).  An install of the same name, tree and source is
 * an exact retry and succeeds without a change.  The record's JSON goes
 * to out.
 */
int skill_local_install(const char *path, const char *expected,
    struct buf *out);
/*
 * skill_remove deletes name's record from the index and logs
 * skill.deactivated; the artifact stays.  66 when it is not installed.
 */
int skill_remove(const char *name, struct buf *out);
/*
 * skill_index_read: the index's records (a JSON array, empty when there
 * is no index) into arena a.  NULL with the error set.
 */
struct jval *skill_index_read(struct arena *a);
/*
 * skill_list appends one SkillSummary line per installed skill to b:
 * name, skill_id, version, source, status, review, tree_sha256,
 * source_kind, source_id, declared tools, requires_network, phi_risk,
 * compatibility_reason and installable.  Each active one's tree is
 * verified against its digest.
 */
int skill_list(struct buf *b);
/*
 * skill_prompt appends to b what the agent's system prompt says of the
 * active skills: each one's name, review, digest, description and
 * artifact directory (its SKILL.md body is invoke_skill's answer);
 * nothing when none is active.  A skill is active when it is installed
 * and active, the installation log's chain verifies, its last event
 * there is skill.activated, its artifact still has its digest and its
 * policy is compatible here.  Each one is appended to active (a J_ARRAY
 * in arena keep) as {"name","review","tree_sha256","dir"}, dir its
 * artifact directory from the project root (a bundled one's, absolute).
 */
/* what a specialist's prompt carries of each SKILL.md body */
#define SKILL_PROMPT_BODY (16u << 10)
int skill_prompt(struct buf *b, struct arena *keep, struct jval *active);
/*
 * skill_recheck checks again that the skill name, active at the agent's
 * start with the digest tree in the directory dir, still is: dir is
 * inspected once more (si filled; release it with skill_info_release
 * either way) and must still have that digest and be compatible, and
 * skill_prompt's checks (without refreshing the sources) must still list
 * it with that digest and directory.  NULL when it is, else why not.
 */
const char *skill_recheck(const char *name, const char *tree,
    const char *dir, struct skill_info *si);
/* ---- bundled skills (bundled.c) ---- */

struct skill_bundled {
	char *dir;		/* DATADIR/skills/NAME, absolute */
	struct skill_info si;
	const char *why;	/* NULL when the agent gets it */
	struct jval *rec;	/* as an index record: name, skill_id, ... */
};
/*
 * skill_bundled_load fills *v with the bundled skills (the data
 * directory's skills/), by name, and returns how many: each one valid,
 * compatible and not taken (an installed skill of recs with its name or
 * id takes its place) is active; the others are unsupported, with why.
 * Release with skill_bundled_release.  skill_bundled_has: 1 when a
 * bundled skill has the name name or the id id (NULL: none).
 */
size_t skill_bundled_load(struct arena *a, const struct jval *recs,
    struct skill_bundled **v);
void skill_bundled_release(struct skill_bundled *v, size_t n);
int skill_bundled_has(const char *name, const char *id);

/* ---- sources (source.c) ---- */

struct skill_source {
	char *id, *trusted_root, *metadata_url, *targets_url;
	int offline, enabled;
	char **approved;	/* tree digests the administrator approved
				   for controlled data (the system file) */
	size_t napproved;
};
struct skill_sources {
	struct skill_source *v;
	size_t n;
	char *file;			/* the file read, NULL for none */
};
/*
 * skill_sources_load reads the first registry found
 * ($HEARTWOOD_SKILL_SOURCES_FILE, which must be absolute and exist, then
 * /etc/heartwood/skill-sources.toml, then the user's
 * $XDG_CONFIG_HOME/heartwood/skill-sources.toml) and checks every field;
 * no file is no source.  Release with skill_sources_release.
 */
int skill_sources_load(struct skill_sources *ss);
void skill_sources_release(struct skill_sources *ss);
const struct skill_source *skill_source_find(const struct skill_sources *ss,
    const char *id);
void skill_source_json(const struct skill_source *s, struct buf *b);

/* ---- catalogs (catalog.c) ---- */

struct tuf_updater;
struct skill_catalog {
	const struct skill_source *src;
	struct tuf_updater *u;		/* refreshed, for the archives */
	struct arena a;
	struct buf raw;
	struct jval *v;
	const struct jval *entries;
};
/*
 * skill_catalog_load refreshes source s through TUF (its cache under
 * .heartwood/cache/skills/ID/{metadata,targets}, bootstrapped from its
 * trusted root), fetches catalog.json (a signed target of at most 8 MiB)
 * and checks it strictly: the schema, entries sorted by name with unique
 * names and ids, each entry's fields, its files giving its tree_sha256,
 * its target skills/NAME/VERSION/TREE.zip, and the signed length and
 * sha256 of that target equal to its archive_size and archive_sha256.
 * Release with skill_catalog_release, also after a failure.
 */
int skill_catalog_load(const struct skill_source *s, struct skill_catalog *cat);
void skill_catalog_release(struct skill_catalog *cat);
/*
 * skill_catalog_cached loads the catalog the last refresh of s stored,
 * checked again but not refreshed: 0, 1 when there is none, or -1.
 */
int skill_catalog_cached(const struct skill_source *s,
    struct skill_catalog *cat);
const struct jval *skill_catalog_entry(const struct skill_catalog *cat,
    const char *name);
/* skill_entry_unsupported: why an entry cannot be installed, or NULL */
const char *skill_entry_unsupported(const struct jval *e);

/*
 * skill_extract extracts the ZIP archive zip (len bytes) of catalog entry
 * e into the empty directory dir, member by member: each must be
 * NAME/PATH of a listed file, once, not colliding with another after
 * case folding, a regular file (no link, device or directory entry),
 * declaring its listed size and holding exactly that many bytes (read at
 * most that many), with its listed sha256; each is created exclusively
 * and given 0755 or 0644 as listed.  Every listed file must be there.
 */
int skill_extract(const void *zip, size_t len, const struct jval *e, int dir);

/*
 * skill_refresh refreshes every enabled source (or only the one named),
 * under the lifecycle lock, and revokes each active catalog install of
 * it whose entry vanished, changed (tree, version or revision) or is
 * marked revoked (with that reason), logging skill.deactivated for each.
 * An active install from a source no longer configured is an error (65).
 * One line per source to out: {"entries":N,"revoked":[NAMES],"source":ID}.
 */
int skill_refresh(const char *only, struct buf *out);
/*
 * skill_catalog_install: the nine steps of a catalog install, under the
 * lifecycle lock: refresh the sources in order (or only source) until one
 * lists name; refuse a conflict (an exact retry succeeds), a revoked or
 * unsupported entry; record the decision, a denial when the entry's
 * tree_sha256 is not expected; refresh again and require the entry
 * unchanged; fetch the archive through TUF; extract it (skill_extract)
 * beside its place and rename it to artifacts/sha256/TREE/NAME; inspect it
 * again; add the record and log skill.activated.
 */
int skill_catalog_install(const char *name, const char *expected,
    const char *source, struct buf *out);
/*
 * skill_catalog_inspect refreshes as an install does and prints what
 * installing name would install: its files, roles, sizes, policy, tree
 * digest, status (available, revoked, unsupported) and source.
 */
int skill_catalog_inspect(const char *name, const char *source,
    struct buf *out);

/* shared by the checks of trees and catalogs (tree.c, policy.c) */
char *skill_fold(const char *path);
const char *skill_role(const char *path);
int skill_clean_path(const char *path);
int skill_valid_name(const char *name);

#endif
