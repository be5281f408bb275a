/*
 * wire.h - the control socket's shared pieces, for control.c (the
 * server) and controlsend.c (the client) only
 */
#ifndef HW_SESSION_WIRE_H
#define HW_SESSION_WIRE_H

#include <sys/un.h>

/* open_dir: an O_PATH descriptor of the session's directory */
int open_dir(struct session *s);
/*
 * address: the socket's path, or, when that is too long for sun_path,
 * the same file reached through the directory's descriptor.
 */
void address(const char *path, int dirfd, struct sockaddr_un *sa);
/* wait_for: poll fd for ev until the deadline; 0 when it timed out */
int wait_for(int fd, short ev, int64_t deadline);
/* read_line reads one "\n"-ended line (without it) within the deadline */
int read_line(int fd, struct buf *b);
/* send_all writes b as long as the reader keeps taking it */
void send_all(int fd, const struct buf *b);
/* same_user: 1 if the peer of socket fd runs as our effective uid */
int same_user(int fd);

#endif
