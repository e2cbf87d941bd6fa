/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * HTTP/1.1 on the API's UNIX socket, by GNU libmicrohttpd on a thread of
 * its own: it takes care of keep-alive, chunked bodies (libvirt's
 * no-content PUTs are chunked uploads of nothing) and "Expect:
 * 100-continue".  Each complete request goes to @handle on that thread.
 */
#ifndef GPIN_API_SERVER_H
#define GPIN_API_SERVER_H

#include <stddef.h>

#include "api/request.h"

struct api_server;

struct api_server_ops {
	/* A whole request; fills @resp (status, malloc'd JSON or NULL). */
	void (*handle)(void *opaque, const char *method, const char *path,
		       const char *body, size_t len,
		       struct api_response *resp);
	/* The response to a request was sent (or the connection died). */
	void (*completed)(void *opaque);
};

/*
 * Serves on @listen_fd (a listening stream socket, which the server owns
 * from then on).  NULL with a reason in @err.
 */
struct api_server *api_server__start(int listen_fd,
				     const struct api_server_ops *ops,
				     void *opaque, char *err, size_t errlen);
void api_server__stop(struct api_server *s);

/* A listening UNIX socket at @path (an old socket file is replaced). */
int api_server__listen_path(const char *path, char *err, size_t errlen);

#endif /* GPIN_API_SERVER_H */
