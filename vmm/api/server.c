// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <microhttpd.h>

#include "api/server.h"
#include "log.h"
#include "thread.h"

struct api_server {
	struct MHD_Daemon *mhd;
	const struct api_server_ops *ops;
	void *opaque;
};

/* One request's body as it arrives. */
struct pending {
	char *body;
	size_t len;
	bool too_large;
};

static enum MHD_Result queue(struct MHD_Connection *conn,
			     struct api_response *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (r->body)
		resp = MHD_create_response_from_buffer(strlen(r->body), r->body,
						       MHD_RESPMEM_MUST_FREE);
	else
		resp = MHD_create_response_from_buffer(0, NULL,
						       MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(r->body);
		return MHD_NO;
	}
	if (r->body)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					"application/json");
	ret = MHD_queue_response(conn, r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	struct api_server *s = cls;
	struct pending *p = *con_cls;
	struct api_response r;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return MHD_NO;
		*con_cls = p;
		return MHD_YES;
	}
	if (*data_size) {
		size_t n = *data_size;

		*data_size = 0;
		if (p->too_large || p->len + n > API_BODY_MAX) {
			p->too_large = true;
			return MHD_YES;
		}
		char *b = realloc(p->body, p->len + n + 1);

		if (!b)
			return MHD_NO;
		memcpy(b + p->len, data, n);
		p->body = b;
		p->len += n;
		p->body[p->len] = '\0';
		return MHD_YES;
	}
	if (p->too_large) {
		r.status = MHD_HTTP_CONTENT_TOO_LARGE;
		r.body = strdup("{\"error\":\"request body too large\"}");
		return queue(conn, &r);
	}
	s->ops->handle(s->opaque, method, url, p->body ? p->body : "", p->len,
		       &r);
	return queue(conn, &r);
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct api_server *s = cls;
	struct pending *p = *con_cls;

	if (p) {
		free(p->body);
		free(p);
		*con_cls = NULL;
	}
	if (s->ops->completed)
		s->ops->completed(s->opaque);
}

struct api_server *api_server__start(int listen_fd,
				     const struct api_server_ops *ops,
				     void *opaque, char *err, size_t errlen)
{
	struct api_server *s = calloc(1, sizeof(*s));

	if (!s) {
		err__set(err, errlen, "out of memory");
		close(listen_fd);
		return NULL;
	}
	s->ops = ops;
	s->opaque = opaque;
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				  MHD_USE_ITC | MHD_USE_ERROR_LOG,
				  0, NULL, NULL, on_request, s,
				  MHD_OPTION_LISTEN_SOCKET, listen_fd,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				  MHD_OPTION_CONNECTION_TIMEOUT, 60U,
				  MHD_OPTION_CONNECTION_LIMIT, 16U,
				  MHD_OPTION_THREAD_STACK_SIZE,
				  (size_t)THREAD_STACK_API,
				  MHD_OPTION_END);
	if (!s->mhd) {
		err__set(err, errlen, "cannot serve HTTP on fd %d", listen_fd);
		close(listen_fd);
		free(s);
		return NULL;
	}
	return s;
}

void api_server__stop(struct api_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->mhd);
	free(s);
}

int api_server__listen_path(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		err__set(err, errlen, "socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err__set(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if ((unlink(path) && errno != ENOENT) ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(fd, 8)) {
		err__set(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
