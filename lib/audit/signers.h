/*
 * signers.h - what signer.c (registries), signclient.c (the HTTP client)
 * and localsigner.c (the local signer) share, and nothing else uses
 */
#ifndef HW_AUDIT_SIGNERS_H
#define HW_AUDIT_SIGNERS_H

#include <sys/types.h>

#define REGISTRY_MAX (256 * 1024)
#define TOKEN_MAX 65536
#define ENDPOINT_MAX 2048
#define BODY_MAX 65536
#define TIMEOUT_MAX 120.0
#define TIMEOUT_DEFAULT 15.0
#define CA_BUNDLE_MAX (4 * 1024 * 1024)
#define SIGN_REQUEST_SCHEMA "heartwood.audit-checkpoint-sign-request.v1"
#define CHECKPOINT_SCHEMA "heartwood.audit-checkpoint.v2"
#define LOCAL_PROFILE "local-development"
#define LOCAL_ENDPOINT "http://127.0.0.1:8771" SIGNER_ENDPOINT_PATH
#define LOCAL_KEY_ID "local-checkpoint-signing"
#define LOCAL_PRIVATE "local-checkpoint-private.pem"
#define LOCAL_PUBLIC "local-checkpoint-public.pem"
#define LOCAL_TOKEN "local-checkpoint-token"
#define REGISTRY_NAME "checkpoint-signers.toml"

/* exists: 1 if path names anything (a dangling symlink too), 0, or -1 */
int exists(const char *path);
/*
 * open_checked opens path (no symbolic link) and checks its type, size
 * and ownership: owner_only wants mode & 066 == 0 and the effective uid,
 * otherwise not group- or other-writable and root or the effective uid.
 */
int open_checked(const char *what, const char *path, off_t max,
    int owner_only);
/* token_read reads a token file into t, which the caller wipes */
int token_read(const char *path, struct buf *t);

#endif
