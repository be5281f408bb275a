/*
 * model - managed local models: a model hub's answers turned into a pinned
 * plan (hub.c, plan.c), downloads through libcurl into .heartwood/models/
 * (fetch.c), and the SHA256SUMS integrity files and safe relative paths
 * every layout step uses (sums.c).  Uses base only.
 *
 * Conventions as in base: 0 or a pointer on success, -1 or NULL with the
 * error recorded by hw_err_set(): 65 for a hub answer, a plan or bytes
 * that are wrong, 69 when the hub cannot be reached or refuses, 74 for
 * local I/O and too little free space, 75 when another download of the
 * same model holds its lock.
 */
#ifndef HW_MODEL_H
#define HW_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/base.h"

#define MODEL_CONTEXT_MIN 18432
#define MODEL_CONTEXT_MAX 1048576
#define MODEL_FILES_MAX 100000
#define MODEL_PATH_MAX 4096
#define MODEL_PLAN_SCHEMA "heartwood.model-plan.v1"

/* ---- safe paths and SHA256SUMS (sums.c) ---- */

/*
 * model_path_ok: 0 when p is a clean relative POSIX path of at most
 * MODEL_PATH_MAX bytes: valid UTF-8, no NUL or other control character,
 * no backslash, and no empty, "." or ".." segment; -1 otherwise (no
 * error recorded).
 */
int model_path_ok(const char *p);
/* model_repo_ok: 0 for one "owner/name" pair of [A-Za-z0-9._-], no "..". */
int model_repo_ok(const char *r);
/* model_hex_ok: 0 when s is exactly n lowercase hex digits. */
int model_hex_ok(const char *s, size_t n);
/*
 * model_file_sha256 hashes the regular file path (opened O_NOFOLLOW) in
 * 1 MiB blocks: hex digest to out and its size to *size.
 */
int model_file_sha256(const char *path, char out[SHA256_HEX + 1],
    int64_t *size);
/*
 * sums_write writes dir/SHA256SUMS over every regular file below dir but
 * itself: "<sha256>  <path>" lines sorted component-wise, each ending in
 * a newline; a symlink or other special file below dir is refused (65).
 */
int sums_write(const char *dir);
/*
 * sums_verify checks dir against dir/SHA256SUMS: the listed set must be
 * exactly the regular files below dir but SHA256SUMS, with no symlink,
 * no duplicate, absolute or ".." entry, and every digest must match
 * ("<hex> *<path>" lines are accepted too).  65 on any difference.
 * *files and *bytes (when not NULL) get the count and total size.
 */
int sums_verify(const char *dir, int64_t *files, int64_t *bytes);
/*
 * sums_write_known and sums_verify_known take the digest of each file
 * known holds (path -> 64 hex) from there instead of reading it: for a
 * directory this process has just written and hashed itself.
 */
struct smap;
int sums_write_known(const char *dir, const struct smap *known);
int sums_verify_known(const char *dir, const struct smap *known,
    int64_t *files, int64_t *bytes);
/*
 * sums_read puts into m (path -> 64 hex, pointing into b) the lines of
 * dir/SHA256SUMS, refusing a malformed one as sums_verify does: what a
 * verify just checked the files against.
 */
struct buf;
int sums_read(const char *dir, struct smap *m, struct buf *b);
/* model_int_or: m's integer member k, dflt when it holds none */
int64_t model_int_or(const struct jval *m, const char *k, int64_t dflt);
/*
 * sums_verify_cached is sums_verify that reads again only the files that
 * changed since a verify kept them in the file cache (see sums.c: a file
 * whose device, inode, size and modification and change times are the
 * ones kept is taken at the digest kept), and keeps every file found
 * right, unless it changed in the last 2 seconds, for the next one.  A
 * cache that is not a regular file this user owns and alone can write is
 * not read.
 */
int sums_verify_cached(const char *dir, const char *cache, int64_t *files,
    int64_t *bytes);
/*
 * model_walk lists the regular files below root (relative paths, sorted
 * component-wise, at most MODEL_FILES_MAX); a symlink or special file is
 * refused (65).  model_files_release frees the list.
 */
struct model_files {
	char **v;
	size_t n, cap;
};
int model_walk(const char *root, struct model_files *out);
void model_files_release(struct model_files *l);
/* model_mkparents creates rel's directories below root, 0700, no links. */
int model_mkparents(const char *root, const char *rel);
/* model_mkstore creates models and its parents, 0700, never a symlink. */
int model_mkstore(const char *models);
/* rm_tree removes path and everything below it; a missing path is fine. */
int rm_tree(const char *path);

/* ---- the hub (hub.c) ---- */

/*
 * Progress of a download: called with the file's path, the bytes it holds
 * now and its size, and done set once the file is complete and verified.
 */
typedef void model_progress_fn(void *arg, const char *path, int64_t have,
    int64_t total, int done);

struct hub {
	char *endpoint;		/* no trailing '/' */
	char *token;		/* NULL when none; never printed or stored */
	model_progress_fn *progress;
	void *progress_arg;
	unsigned retry_ms[2];	/* back-off before attempts 2 and 3 */
};
/*
 * hub_init reads HF_ENDPOINT (required: https, or http on a loopback host;
 * no user, query or fragment) and the token: HF_TOKEN when set and not
 * empty, else the file HF_TOKEN_PATH, else $HF_HOME/token, else
 * ~/.cache/huggingface/token, which must be a regular file owned by this
 * user that group and others can neither read nor write (65 otherwise).
 * The token is added to the redaction registry (base: redact_secret).
 */
int hub_init(struct hub *h);
void hub_release(struct hub *h);
/*
 * hub_get_json fetches url from the hub (no redirect followed, 30 s to
 * connect, 16 MiB at most) and parses a JSON object into a; what names
 * the request in messages.  A status other than 200 is 69, a body that is
 * not a JSON object 65.
 */
struct jval *hub_get_json(struct hub *h, const char *url, const char *what,
    struct arena *a);

/*
 * One file to fetch: its relative path, exact size, and the digests the
 * hub published (sha256 from lfs.sha256, blob the git blob SHA-1), either
 * of which may be NULL.
 */
struct hub_file {
	const char *path;
	int64_t size;
	const char *sha256;
	const char *blob;
	const char *url;	/* the resolve URL */
	const char *commit;	/* the pinned commit X-Repo-Commit must name */
};
/*
 * hub_fetch makes dest (a path below a staging directory the caller owns)
 * hold exactly f's bytes: it keeps what dest already holds and asks for
 * the rest with an HTTP range, follows at most 5 redirects (http and https
 * only; the token is sent to the hub's host alone), tries up to 3 times
 * when the connection fails, and checks the size and every published
 * digest.  On a digest or size mismatch dest is removed (65).  The SHA-256
 * of the file goes to sha_out.
 */
int hub_fetch(struct hub *h, const struct hub_file *f, const char *dest,
    char sha_out[SHA256_HEX + 1]);

/* ---- plans (plan.c) ---- */

enum model_runtime { RUNTIME_AUTO, RUNTIME_LLAMA, RUNTIME_VLLM };
/*
 * model_inspect asks the hub about repo at rev (NULL: the default branch)
 * with blobs=true and returns the plan (JSON, in a): the full commit the
 * hub answered, the license, context window, model type and tool-call
 * parser, every GGUF and snapshot candidate with its model id, resource
 * figures and files, and the selected candidate's model id (null when
 * none is clear).  Refused (65): a malformed answer, custom code, no
 * files, an unsafe file name, no or too small a context window.
 */
struct jval *model_inspect(struct hub *h, const char *repo, const char *rev,
    enum model_runtime rt, struct arena *a);
/*
 * model_plan_pick checks a plan (a JSON object, as model_inspect writes
 * it; it may have been edited) strictly and returns the candidate with
 * model id id, or the selected one when id is NULL.  65 when malformed,
 * 2 when nothing is selected and no id given, 66 for an unknown id.
 */
const struct jval *model_plan_pick(const struct jval *plan, const char *id);

/*
 * model_parser_for: the tool-call parser of a repository and model type
 * (either may be NULL): qwen3_coder, openai, hermes, or NULL for none.
 * model_config_context: the first integer >= 2048 among a config's
 * max_position_embeddings, model_max_length, n_positions, seq_length,
 * capped at MODEL_CONTEXT_MAX; 0 when none.
 */
const char *model_parser_for(const char *repo, const char *type);
int64_t model_config_context(const struct jval *cfg);

/*
 * The pieces of model_inspect the catalog's plans (pinned.c) use too.
 * model_hub_info GETs the model info of repo at rev (NULL: the default
 * branch) with blobs=true.  model_screen refuses custom code (the tag
 * custom_code, config.auto_map) and a repository without files (65).
 * model_sibling checks one siblings[] entry: a safe rfilename, size and
 * lfs.size counts of bytes that agree, lfs.sha256 and blobId hex (65);
 * *size -1 when it has no size.  model_weights_name: 1 for
 * model(-NNNNN-of-NNNNN)?.safetensors(.index.json)?.  model_precision:
 * the Q<n>_... token of a GGUF file name, upper-cased, or null.
 */
struct jval *model_hub_info(struct hub *h, const char *repo, const char *rev,
    struct arena *a);
int model_screen(const char *repo, const struct jval *info,
    const struct jval *sib);
int model_sibling(const char *repo, const struct jval *s, int64_t *size);
int model_weights_name(const char *name);
struct jval *model_precision(struct arena *a, const char *path);

/* ---- plans of catalog entries (pinned.c) ---- */

/*
 * model_catalog_plan: the plan for the managed catalog's (catalog_load)
 * artifact or snapshot id, pinned by the catalog and checked against the
 * hub's model info at the catalog's revision (blobs=true): the commit the
 * hub answers must be the catalog's (a short catalog revision must be its
 * prefix; the full commit is used from then on), custom code is refused,
 * an artifact's file must be listed with the catalog's size and, where
 * the hub publishes lfs.sha256, the catalog's SHA-256; a snapshot's files
 * are its download policy's, with config.json and the weights, adding up
 * to within 20 % of expected_size_bytes.  The plan (one candidate, model
 * id = the catalog id, origin "catalog") is for model_download, which
 * then checks every file's size and SHA-256 (the catalog's for an
 * artifact, the hub's lfs.sha256 or git blob for a snapshot's files).
 * 66 for an id the catalog does not list, 65 for any difference.
 */
struct jval *model_catalog_plan(struct hub *h, const struct jval *catalog,
    const char *id, struct arena *a);
/*
 * catalog_entry: the catalog's artifact (models[].artifact; *snapshot 0)
 * or snapshot (*snapshot 1) named id, NULL when it lists none.
 */
const struct jval *catalog_entry(const struct jval *catalog, const char *id,
    int *snapshot);

/* ---- downloads (fetch.c) ---- */

/*
 * model_download fetches candidate cand of plan into models (created
 * 0700 when missing, normally .heartwood/models): lock .<id>.lock,
 * resume record .<id>.partial.json (a staging directory .<id>.partial/
 * is kept for a later run only when the record matches exactly), the
 * free-space check, each file by hub_fetch, HEARTWOOD-SOURCE.json and
 * SHA256SUMS, their verification, and the atomic rename onto models/<id>.
 * A model already published is verified again instead.  The result (a
 * JSON object in a) names the model, its path and sizes.
 */
struct jval *model_download(struct hub *h, const struct jval *plan,
    const struct jval *cand, const char *models, struct arena *a);

/* ---- connection discovery (discover.c) ---- */

#define MODEL_CATALOG_SCHEMA "heartwood.model-catalog.v1"
struct discover_req {
	const char *connection_id;
	const char *url;	/* {base_url}/models, checked by the caller */
	const char *protocol;	/* anthropic, openai or openai-compatible */
	const char *key;	/* NULL: no credential; never printed */
	const char *api_version;	/* anthropic-version, or NULL */
	const char *prefix;	/* model_prefix, for execution_model */
	long timeout_ms;	/* for each attempt */
	int retries;		/* attempts after the first */
};
/*
 * model_discover GETs r->url (no redirect, at most 16 MiB; the key as
 * "Authorization: Bearer" or, for anthropic, "x-api-key" with
 * "anthropic-version"), tried again after 1 s when the connection fails
 * or the status is 429 or 5xx, and returns its data[] as
 * heartwood.model-catalog.v1 entries (an array in a, sorted by model_id):
 * model_id, display_name, execution_model (model_prefix + id),
 * availability, reason, context_window and supports_tools.  A message
 * never holds the key or the answer's body: 69 for a status or a failed
 * connection, 65 for a malformed list.
 */
struct jval *model_discover(const struct discover_req *r, struct arena *a);

/* ---- the managed catalog files (catalog.c) ---- */

#define LOCAL_CATALOG_SCHEMA "heartwood.local-model-catalog.v2"
#define SNAPSHOT_CATALOG_SCHEMA "heartwood.model-snapshot-catalog.v3"
/*
 * catalog_load reads model-catalog.toml at catalog (its artifact
 * manifests relative to its directory) and snapshots.toml at snapshots,
 * checks every rule of hw-model(1) CATALOG FILES, and returns the
 * catalog as JSON in a: defaults, models (each with its artifact),
 * download_policies and snapshots, in file order.  65 naming the file,
 * the entry and the rule.
 */
struct jval *catalog_load(const char *catalog, const char *snapshots,
    struct arena *a);

/* ---- the GPU inventory (gpu.c) ---- */

#define GPUS_MAX 64
#define GPU_NAME_MAX 128
struct gpu {
	int index;
	char name[GPU_NAME_MAX];
	int64_t memory_total, memory_free;	/* bytes */
	char driver[32], compute_cap[16];
};
struct gpu_list {
	struct gpu v[GPUS_MAX];
	size_t n;
	int missing;		/* nvidia-smi is not installed */
};
/*
 * gpu_inventory runs nvidia-smi --query-gpu=index,name,memory.total,
 * memory.free,driver_version,compute_cap --format=csv,noheader,nounits
 * from PATH (20 s at most, 256 KiB of answer) and parses it with
 * gpu_parse: one GPU a line, six comma-separated fields, memory in MiB,
 * free at most total, at most GPUS_MAX.  No nvidia-smi is no GPU
 * (l->missing set); one that fails is 69, an answer out of shape 65.
 */
int gpu_inventory(struct gpu_list *l);
int gpu_parse(const char *text, size_t len, struct gpu_list *l);

/* ---- recommendations (recommend.c) ---- */

#define RECOMMEND_SCHEMA "heartwood.model-recommendation.v1"
/*
 * model_recommend: for platform (generic, terra, carina) and the GPUs
 * of l, the catalog's (catalog_load) artifacts and snapshots normalized
 * into one kind of choice, each marked candidate or not with the reason,
 * and the recommended snapshot: the candidate of the highest tier, then
 * tensor-parallel size, then earliest in the catalog (hw-model(1)
 * RECOMMENDATIONS).  gpus: the count asked for, 0 for any.
 */
struct jval *model_recommend(const struct jval *catalog, const char *platform,
    const struct gpu_list *l, int gpus, struct arena *a);

/* ---- raw imports (import.c) ---- */

struct model_import {
	const char *path;	/* a GGUF file or a safetensors directory */
	const char *repo;	/* source_repository, OWNER/NAME */
	const char *rev;	/* source_revision, a full commit */
	const char *license;	/* license_posture */
	int64_t context;	/* 0: from config.json (directories only) */
	const volatile int *cancel;	/* set when the user interrupts */
	model_progress_fn *progress;
	void *progress_arg;
};
/*
 * model_import copies a local GGUF file (it must start with "GGUF") or a
 * safetensors directory (config.json with architectures and no auto_map,
 * no *.py, a *.safetensors file, a tool-call parser) into
 * models/imported-<16 hex>/ with heartwood-model.json and SHA256SUMS:
 * lock .<id>.lock, staging .<id>.partial/ (removed on any failure or
 * cancel), free space of the size plus 512 MiB, files created O_EXCL,
 * hashed as they are copied and synced, a source that changes during the
 * copy refused, the staged set verified, then one rename.  A symlink in
 * the source, or a source that overlaps models, is refused (65).  Cancel
 * is 130 with nothing left behind.  The result is a JSON object in a.
 */
struct jval *model_import(const struct model_import *im, const char *models,
    struct arena *a);

/* ---- bundles: the ZIP reader (zipread.c) ---- */

/* One central directory entry. */
struct zipent {
	char *name;
	uint16_t flags, method;
	uint32_t crc, unix_mode;	/* unix_mode 0 unless made on Unix */
	uint64_t size, csize, offset;
};
struct zipdir {
	struct zipent *e;
	uint64_t n, count, size, cd_off, cd_size;
};
/*
 * zipdir_read reads the central directory of the ZIP file open on fd
 * (ZIP64 understood): at most max entries, every entry whole, the
 * directory inside the file (65 otherwise, "invalid bundle 'path': ...").
 * zipent_data finds where e's bytes start (*at), after checking that its
 * local header names the same member with the same method and that the
 * bytes end before the central directory.
 */
int zipdir_read(struct zipdir *z, int fd, const char *path, uint64_t max);
int zipent_data(const struct zipdir *z, const struct zipent *e, int fd,
    const char *path, uint64_t *at);
void zipdir_release(struct zipdir *z);

/* ---- bundles: the manifest (manifest.c) ---- */

#define BUNDLE_SCHEMA "heartwood.model-bundle.v1"
#define BUNDLE_MANIFEST "heartwood-model-bundle.json"
#define BUNDLE_MANIFEST_MAX (1u << 20)
/*
 * bundle_canon appends v's canonical manifest form: keys sorted, no
 * spaces, ASCII only (\uXXXX in lower case, surrogate pairs past the
 * BMP), as Python's json.dumps(sort_keys=True, separators=(",", ":")).
 */
void bundle_canon(struct buf *b, const struct jval *v);
/*
 * manifest_check: 0 when man is a heartwood.model-bundle.v1 manifest
 * with exactly its keys, a model of exactly its 37 keys of the right
 * types, safe unique file paths, the sizes adding up and the runtime's
 * cross-field rules; 65 with the reason otherwise.
 */
int manifest_check(const struct jval *man);
/* model_id_ok: 0 for [a-z0-9._-], at most 128, no "..", no leading . - */
int model_id_ok(const char *id);

/* ---- bundles (bundle.c) ---- */

/*
 * Both call progress (when not NULL) with progress_arg as each member is
 * copied, and once more with done set once its hash checks out.
 *
 * bundle_export writes the verified model models/id as the bundle out,
 * which must not exist: lock .NAME.heartwood-lock, temp file
 * .NAME.heartwood-partial (O_EXCL, 0600), STORED members with fixed
 * times, modes and order written by libarchive, every file hashed again
 * as it is copied (a change aborts), sync, then link() onto out.  Any
 * failure or cancel removes the temp file.  The result names the bundle
 * and its manifest_sha256.
 */
struct jval *bundle_export(const char *models, const char *id,
    const char *out, const volatile int *cancel, model_progress_fn *progress,
    void *progress_arg, struct arena *a);
/*
 * bundle_inspect checks the bundle at path without side effects and
 * returns its plan: bundle_path, bundle_size_bytes, manifest_sha256,
 * file_count, runtime_profile, model (marked unvalidated) and warnings.
 */
struct jval *bundle_inspect(const char *path, struct arena *a);
/*
 * bundle_import inspects again, requires its manifest_sha256 to be
 * approve (refused before anything is written), and extracts into
 * models/<model_id> through .<id>.import-partial/ (0700; each file
 * O_EXCL|O_NOFOLLOW 0600, hashed and synced), then one rename.
 */
struct jval *bundle_import(const char *path, const char *approve,
    const char *models, const volatile int *cancel,
    model_progress_fn *progress, void *progress_arg, struct arena *a);

/* ---- installed models (installed.c) ---- */

/*
 * What an installed model is, from models/<id>/ and its provenance
 * (heartwood-model.json, else HEARTWOOD-SOURCE.json).  Strings point into
 * the arena given to model_info_load, but dir (malloc'd).
 */
struct model_info {
	const char *id;
	char *dir;		/* models/<id> */
	const struct jval *meta;
	const char *runtime;	/* "llama-cpp" or "vllm" */
	int gguf;		/* runtime llama-cpp */
	const char *artifact;	/* the GGUF file below dir, or NULL */
	int64_t size;		/* the GGUF file, or a snapshot's bytes */
	int64_t context;	/* the model's limit (context_window) */
	const char *parser, *precision, *model_type;
	const char *qualification;	/* "unvalidated" unless it says */
	const struct jval *platforms;	/* validated_platforms, or NULL */
	int64_t tp;		/* tensor_parallel_size, 1 by default */
	int64_t min_gpu_mem;	/* minimum_gpu_memory_bytes, 0 if none */
	int verified;
};
/*
 * model_info_load reads model id of models (when verify, after
 * sums_verify_cached, its cache models/.<id>.verified.json): 66 for a
 * model that is missing, does not verify or whose provenance is unusable,
 * 2 for an invalid id.  model_info_release frees dir.
 * model_info_validated_on: 1 when the model is qualified and lists
 * platform among its validated_platforms.
 */
int model_info_load(const char *models, const char *id, int verify,
    struct model_info *mi, struct arena *a);
void model_info_release(struct model_info *mi);
int model_info_validated_on(const struct model_info *mi,
    const char *platform);

/* ---- the resource planner (resources.c) ---- */

#define RESOURCE_PLAN_SCHEMA "heartwood.model-resource-plan.v1"
/*
 * ram_available: bytes of RAM available, the least of /proc/meminfo's
 * MemAvailable, cgroup v2 memory.max - memory.current and cgroup v1
 * memory.limit_in_bytes - memory.usage_in_bytes (of this process's
 * cgroup, else the hierarchy's root); -1 when none can be read.  The
 * files are read below $HW_TEST_SYSROOT when it is set (for tests).
 */
int64_t ram_available(void);

struct gpu_dev {
	int64_t index;
	const char *name;
	const char *driver, *cc;	/* NULL from sinfo */
	int64_t total, free;		/* bytes */
	const char *partition;		/* sinfo's, or NULL */
};
struct gpu_inv {
	struct gpu_dev *v;
	size_t n, cap;
	const char *source;	/* "nvidia-smi", "sinfo" or NULL (none) */
	const char *partition;
};
/*
 * gpu_devices: the GPUs of gpu_inventory (nvidia-smi); when it is not
 * installed or lists none, Slurm's sinfo --noheader
 * --format=%P|%G|%a|%m|%c (the up partition with the most GPUs of a
 * known model, their memory from the known-model table: L40S 48 GB, T4
 * 16 GB); none when neither lists any.  nvidia-smi failing (no driver,
 * no device) counts as no GPU; sinfo failing is 69, an nvidia-smi line
 * that does not parse 65.
 */
int gpu_devices(struct gpu_inv *inv, struct arena *a);

struct resource_plan {
	const char *memory;	/* "ram" (llama.cpp) or "gpu" (vLLM) */
	int64_t available;	/* bytes; <= 0 unknown */
	int64_t weights;	/* int(size x multiplier) */
	int64_t fixed;		/* the runtime's overhead */
	int64_t room;		/* tokens the usable memory leaves */
	int64_t context, input, output, message_chars, estimate, tp;
	int eager;		/* each device used has <= 20 GiB free */
};
/*
 * resource_plan: the context window, budgets and estimate of mi on this
 * machine (hw-model(1) PLANNING): llama.cpp from ram, vLLM from the tp
 * GPUs with most free memory (each with compute capability 7.5, 8.0 for
 * gpt-oss and MXFP4, 8.9 for FP8, and driver 525.60.13 or later; inv is
 * sorted).  69 when the model does not fit or the GPUs do not qualify.
 * resource_budgets fills input, output and message_chars from context.
 */
int resource_plan(const struct model_info *mi, struct gpu_inv *inv,
    int64_t ram, struct resource_plan *p);
void resource_budgets(struct resource_plan *p);
struct jval *resource_plan_json(const struct model_info *mi,
    const struct gpu_inv *inv, int64_t ram, const struct resource_plan *p,
    struct arena *a);

/* ---- node-local staging (stage.c) ---- */

/*
 * model_stage copies the model directory dir (bytes in all) to
 * scratch/heartwood-models/<id>/ (a directory of 0700 created when
 * missing; lock .<id>.lock, staging .<id>.partial, then one rename) and
 * verifies it against its SHA256SUMS; a staged copy that already
 * verifies is kept (*reused 1), one that does not is replaced.  Returns
 * the staged path (malloc'd), or NULL: 72 when scratch is unset, not
 * absolute or not a writable directory, 73 when the copy cannot be made
 * (space, permission), 74 when the copy does not verify, 75 when another
 * run stages the model, 130 when *cancel was set.
 */
char *model_stage(const char *dir, const char *id, int64_t bytes,
    const char *scratch, const volatile int *cancel, int *reused);

/* ---- the runtime launcher (launch.c) ---- */

#define LAUNCH_SERVED_ID "heartwood-managed-model"
#define LAUNCH_PORT 8765
#define LAUNCH_STOP_SECONDS 10
#define LAUNCH_TAIL_BYTES 8192
#define LAUNCH_LOG ".heartwood/logs/local-model.log"
#define LAUNCH_CACHE ".heartwood/cache"

struct launch {
	const struct model_info *mi;
	const struct resource_plan *plan;
	const char *model_dir;	/* absolute path of the model */
	const char *cache_dir;	/* absolute path of .heartwood/cache */
	const char *log;	/* the log's path */
	int64_t port, timeout_s;
	int slurm;		/* through srun, with the job's SLURM_* */
	char *argv[32];
	char *envp[64];
	size_t argc, envc;
	int log_fd;		/* -1 until launch_open_log */
	pid_t pid;		/* the runtime, 0 once reaped */
	int status;		/* its wait status once reaped */
};
/*
 * launch_command fills l->argv: llama-server --model GGUF --jinja --alias
 * heartwood-managed-model --host 127.0.0.1 --port P --ctx-size C, or
 * heartwood-vllm serve DIR --host 127.0.0.1 --port P --served-model-name
 * heartwood-managed-model --max-model-len C --tensor-parallel-size TP
 * --enable-auto-tool-choice --tool-call-parser PARSER [--enforce-eager];
 * with l->slurm, after srun --nodes=1 --ntasks=1 (and --gpus=TP for
 * vLLM), and the job's SLURM_* variables are passed on too.
 * launch_environment fills l->envp: the allowlisted variables of this
 * process (no credential, no proxy) and the caches (HF, Torch, XDG,
 * Triton, vLLM) under l->cache_dir, offline; for vLLM also
 * VLLM_USE_FLASHINFER_SAMPLER=0 and VLLM_V1_USE_OUTLINES_CACHE=0.
 */
void launch_command(struct launch *l);
void launch_environment(struct launch *l);
/* launch_port_free: 0 when 127.0.0.1:port can be bound now, else 69 */
int launch_port_free(int64_t port);
/*
 * launch_open_log opens l->log for appending (its directories 0700, the
 * file 0600, O_NOFOLLOW, a regular file of this user with one link);
 * launch_start runs l->argv with l->envp in a process group of its own,
 * stdin /dev/null, stdout and stderr to the log, killed when this process
 * dies; 69 when it cannot be run.
 */
int launch_open_log(struct launch *l);
int launch_start(struct launch *l);
/*
 * launch_probe: 1 when GET http://127.0.0.1:port/v1/models (2 s, no proxy)
 * answers 200 with data[].id holding heartwood-managed-model.
 * launch_wait_ready probes once a second until it does (0), the runtime
 * exits (70), l->timeout_s pass (70) or *cancel is set (130), with a
 * progress line on stderr every 15 s.
 */
int launch_probe(int64_t port);
int launch_wait_ready(struct launch *l, const volatile int *cancel);
/* launch_child_exited: 1 once the runtime has exited (reaped) */
int launch_child_exited(struct launch *l);
/*
 * launch_stop: SIGTERM to the runtime's process group, up to
 * LAUNCH_STOP_SECONDS for it to exit, then SIGKILL (returns 1 then).
 */
int launch_stop(struct launch *l);
/* launch_log_tail writes the last LAUNCH_TAIL_BYTES of path, escaped */
void launch_log_tail(const char *path, FILE *out);
void launch_release(struct launch *l);

#endif
