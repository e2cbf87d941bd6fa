// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/host_defaults.h"
#include "log.h"

#define LINE_MAX_LEN	1024

/* One key of the file: its values, in the order of their enum. */
struct host_key {
	const char *name;
	const char *const *values;	/* NULL-terminated */
	const char *expect;		/* for messages */
};

enum { KEY_PIN, KEY_SERVICE, KEY_TRANSPORT, KEY_COUNT };

/* The routes' own word tables (vm_config.h) */
static const struct host_key keys[KEY_COUNT] = {
	[KEY_PIN] = { "pin", disk_pin_words, DISK_PIN_EXPECT },
	[KEY_SERVICE] = { "service", disk_io_words, DISK_IO_EXPECT },
	[KEY_TRANSPORT] = { "transport", disk_transport_words,
			    DISK_TRANSPORT_EXPECT },
};

static unsigned int *key_line(struct host_defaults *h, unsigned int k)
{
	switch (k) {
	case KEY_PIN:
		return &h->pin_line;
	case KEY_SERVICE:
		return &h->io_line;
	default:
		return &h->transport_line;
	}
}

static void key_set(struct host_defaults *h, unsigned int k, unsigned int v)
{
	if (k == KEY_PIN)
		h->pin = v;
	else if (k == KEY_SERVICE)
		h->io = v;
	else
		h->transport = v;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && strchr(" \t\r", end[-1]))
		*--end = '\0';
	return s;
}

/* "key = value" or "key = \"value\"", comments already cut; 0 or -1. */
static int parse_line(struct host_defaults *h, char *line, unsigned int n,
		      const char *name, char *err, size_t errlen)
{
	char *eq = strchr(line, '='), *key, *val;
	unsigned int k, *seen;
	size_t len;
	int v;

	if (!eq)
		return err__set(err, errlen, "%s:%u: expected 'key = value'",
				name, n);
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	len = strlen(val);
	if (len && val[0] == '"') {
		if (len < 2 || val[len - 1] != '"')
			return err__set(err, errlen, "%s:%u: %s: unterminated "
					"quote", name, n, key);
		val[len - 1] = '\0';
		val++;
	}
	for (k = 0; k < KEY_COUNT; k++)
		if (!strcmp(key, keys[k].name))
			break;
	if (k == KEY_COUNT)
		return err__set(err, errlen, "%s:%u: unknown key '%s' (pin, "
				"service or transport)", name, n, key);
	v = config__word(keys[k].values, val);
	if (v < 0)
		return err__set(err, errlen, "%s:%u: %s = '%s': expected %s",
				name, n, key, val, keys[k].expect);
	seen = key_line(h, k);
	if (*seen)
		return err__set(err, errlen, "%s:%u: %s is set twice (first "
				"on line %u)", name, n, key, *seen);
	*seen = n;
	key_set(h, k, v);
	return 0;
}

int host_defaults__parse(struct host_defaults *h, const char *text,
			 size_t len, const char *name, char *err,
			 size_t errlen)
{
	char line[LINE_MAX_LEN], *hash, *s;
	const char *p = text, *end = text + len, *nl;
	unsigned int n = 0;
	size_t l;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		l = nl - p;
		n++;
		if (l >= sizeof(line))
			return err__set(err, errlen, "%s:%u: line longer than "
					"%zu bytes", name, n, sizeof(line) - 1);
		memcpy(line, p, l);
		line[l] = '\0';
		if (memchr(line, '\0', l))
			return err__set(err, errlen, "%s:%u: a NUL byte", name,
					n);
		/* No value has a '#': it starts a comment wherever it stands. */
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		s = trim(line);
		if (*s && parse_line(h, s, n, name, err, errlen))
			return -1;
	}
	return 0;
}

const char *host_defaults__path(void)
{
	const char *env = getenv(HOST_DEFAULTS_ENV);

	return env && *env ? env : HOST_DEFAULTS_PATH;
}

int host_defaults__load(struct host_defaults *h, const char *path,
			bool explicit, char *err, size_t errlen)
{
	char *buf;
	size_t len = 0;
	ssize_t n;
	int fd, ret;

	memset(h, 0, sizeof(*h));
	if (vm_config__set_string(h->path, sizeof(h->path), path,
				  HOST_DEFAULTS_ENV, err, errlen))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && !explicit)
			return 0;
		return err__set(err, errlen, "%s%s: %s", explicit ?
				HOST_DEFAULTS_ENV "=" : "", path,
				strerror(errno));
	}
	buf = malloc(HOST_DEFAULTS_MAX + 1);
	if (!buf) {
		close(fd);
		return err__set(err, errlen, "%s: out of memory", path);
	}
	while (len <= HOST_DEFAULTS_MAX &&
	       (n = read(fd, buf + len, HOST_DEFAULTS_MAX + 1 - len)) > 0)
		len += n;
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret)
		err__set(err, errlen, "%s: %s", path, strerror(-ret));
	else if (len > HOST_DEFAULTS_MAX)
		ret = err__set(err, errlen, "%s: larger than %u bytes", path,
			       HOST_DEFAULTS_MAX);
	else
		ret = host_defaults__parse(h, buf, len, path, err, errlen);
	free(buf);
	h->found = !ret;
	return ret ? -1 : 0;
}

void host_defaults__apply(const struct host_defaults *h,
			  struct vm_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->ndisks; i++) {
		struct disk_config *d = &cfg->disks[i];

		if (h->pin_line && d->pin_from == CONFIG_FROM_DEFAULT) {
			d->pin = h->pin;
			d->pin_from = CONFIG_FROM_HOST;
		}
		if (h->io_line && d->io_from == CONFIG_FROM_DEFAULT) {
			d->io = h->io;
			d->io_from = CONFIG_FROM_HOST;
		}
		if (h->transport_line &&
		    d->transport_from == CONFIG_FROM_DEFAULT) {
			d->transport = h->transport;
			d->transport_from = CONFIG_FROM_HOST;
		}
	}
}

void host_defaults__print(FILE *out, const struct host_defaults *h)
{
	if (!h->found) {
		fprintf(out, "host defaults: none (no %s)\n", h->path);
		return;
	}
	fprintf(out, "host defaults: %s", h->path);
	if (h->pin_line)
		fprintf(out, ", pin=%s (line %u)", disk_pin__name(h->pin),
			h->pin_line);
	if (h->io_line)
		fprintf(out, ", service=%s (line %u)", disk_io__name(h->io),
			h->io_line);
	if (h->transport_line)
		fprintf(out, ", transport=%s (line %u)",
			disk_transport__name(h->transport), h->transport_line);
	if (!h->pin_line && !h->io_line && !h->transport_line)
		fprintf(out, " (sets nothing)");
	fputc('\n', out);
}
