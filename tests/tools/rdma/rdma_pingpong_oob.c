/* rdma_verbs_pingpong's out-of-band channel: the TCP connection over which the two sides swap
 * QPN and GID and meet before the first send and at the end, as RDMA applications do before any
 * verbs traffic can flow. Plain sockets, no verbs: a file apart from the verbs code. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdma_pingpong.h"

static void split_addr(const char *text, struct sockaddr_in *out)
{
	char host[64];
	const char *colon = strrchr(text, ':');
	if (!colon || (size_t)(colon - text) >= sizeof(host))
		DIE("bad ADDR:PORT '%s'", text);
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = 0;
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
		DIE("bad address '%s'", host);
}

int oob_connect(const struct options *o)
{
	struct sockaddr_in a;
	int one = 1, fd;
	if (o->listen) {
		split_addr(o->listen, &a);
		int l = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			DIE("listen %s: %s", o->listen, strerror(errno));
		printf("{\"listening\":true}\n");
		fflush(stdout);
		fd = accept(l, NULL, NULL);
		close(l);
	} else {
		split_addr(o->connect, &a);
		for (int tries = 0;; tries++) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
				break;
			close(fd);
			if (tries == 100)
				DIE("connect %s: %s", o->connect, strerror(errno));
			usleep(50000);
		}
	}
	if (fd < 0)
		DIE("accept: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

void oob_exchange(int fd, const void *mine, void *theirs, size_t len)
{
	if (write(fd, mine, len) != (ssize_t)len)
		DIE("out-of-band write: %s", strerror(errno));
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)theirs + got, len - got);
		if (n <= 0)
			DIE("out-of-band read: peer gone");
		got += (size_t)n;
	}
}
