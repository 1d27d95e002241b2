/*
 * rpmabench: librpma's side of the harness's rpma rows (benchcmp compare,
 * hack/benchcmp; rperf rpma, cmd/rperf/rpma.go, does the same with the Go
 * rpma package; hack/vm builds this with -ctools as
 * /opt/purerdma/test/rpmabench).
 *
 *	rpmabench server <addr> <port> <size>
 *	rpmabench client <addr> <port> <test> <size> <iters>
 *
 * test is read, write_flush or sendrecv (an "rpma_" prefix is allowed).
 *
 * The server registers a buffer of 2*size bytes (rounded up to a page),
 * listens (printing "listening"), accepts one connection with a receive
 * posted and the buffer's MR descriptor and its peer config descriptor as
 * private data (struct common_data, as librpma's examples send it). The
 * client's private data, "rpmabench <test> <count>", says how many
 * messages a sendrecv client sends: the server answers each with a send
 * of size bytes, busy-polling its CQ. Then it waits for the client to
 * disconnect.
 *
 * The client connects and runs iters/10 (at least 5) warm-up iterations,
 * then iters timed ones (clock_gettime(CLOCK_MONOTONIC) around each),
 * busy-polling rpma_cq_get_wc for the completions:
 *	read		rpma_read of size bytes (COMPLETION_ALWAYS)
 *	write_flush	rpma_write (COMPLETION_ON_ERROR), then rpma_flush
 *			(VISIBILITY, COMPLETION_ALWAYS); waits for the flush
 *	sendrecv	rpma_recv, rpma_send (COMPLETION_ALWAYS), waits for
 *			the send's and the reply's completions; half the
 *			round trip
 * and prints
 *	RESULT test=<test> bytes=<size> iters=<iters> median_us=<median>
 *
 * Every failure is printed to stderr; the exit status is then 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <librpma.h>

#include "rpmapeer.h"


enum test { T_READ, T_WRITE_FLUSH, T_SENDRECV };

static const char *test_names[] = { "read", "write_flush", "sendrecv" };

static int
parse_test(const char *s, enum test *t)
{
	int i;

	if (strncmp(s, "rpma_", 5) == 0)
		s += 5;
	for (i = 0; i < 3; i++) {
		if (strcmp(s, test_names[i]) == 0) {
			*t = (enum test)i;
			return 0;
		}
	}
	return -1;
}

static long
parse_num(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || n < lo || n > hi) {
		fprintf(stderr, "invalid %s %s\n", what, s);
		exit(2);
	}
	return n;
}

/* alloc_buf allocates n bytes rounded up to a page, page-aligned. */
/* poll_wc busy-polls cq for one completion and checks its status. */
static void
poll_wc(struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret;

	while ((ret = rpma_cq_get_wc(cq, 1, wc, NULL)) == RPMA_E_NO_COMPLETION)
		;
	if (ret) {
		fprintf(stderr, "rpma_cq_get_wc: %s\n", rpma_err_2str(ret));
		exit(1);
	}
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "completion (opcode %d): %s\n", wc->opcode,
			ibv_wc_status_str(wc->status));
		exit(1);
	}
}

static int
server(const char *addr, const char *port, size_t size)
{
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct common_data data;
	struct rpma_conn_private_data pdata, cdata;
	size_t buf_size = 2 * size;
	char hello[64], test[32];
	long count = 0, replies = 0, sent = 0;
	struct ibv_wc wc;
	char *buf;

	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
		&ibv_ctx));
	CHECK(rpma_peer_new(ibv_ctx, &peer));
	buf = alloc_buf(&buf_size);
	CHECK(rpma_mr_reg(peer, buf, buf_size,
		RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
		RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_SEND |
		RPMA_MR_USAGE_RECV, &mr));

	CHECK(rpma_peer_cfg_new(&pcfg));
	describe(mr, pcfg, &data);
	pdata.ptr = &data;
	pdata.len = sizeof(data);

	listen_announced(peer, addr, port, &ep);

	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	CHECK(rpma_conn_req_get_private_data(req, &cdata));
	memset(hello, 0, sizeof(hello));
	if (cdata.ptr != NULL)
		memcpy(hello, cdata.ptr, cdata.len < sizeof(hello) - 1 ?
			cdata.len : sizeof(hello) - 1);
	if (sscanf(hello, "rpmabench %31s %ld", test, &count) != 2 ||
			count < 0) {
		fprintf(stderr, "client's private data %.63s\n", hello);
		return 1;
	}
	if (strcmp(test, "sendrecv") != 0)
		count = 0;
	CHECK(rpma_conn_req_recv(req, mr, size, size, 0));
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);
	CHECK(rpma_conn_get_cq(conn, &cq));

	/* Answer every message, keeping a receive posted. */
	while (replies < count || sent < count) {
		poll_wc(cq, &wc);
		switch (wc.opcode) {
		case IBV_WC_RECV:
			if (++replies < count)
				CHECK(rpma_recv(conn, mr, size, size, 0));
			CHECK(rpma_send(conn, mr, 0, size,
				RPMA_F_COMPLETION_ALWAYS, NULL));
			break;
		case IBV_WC_SEND:
			sent++;
			break;
		default:
			fprintf(stderr, "completion opcode %d\n", wc.opcode);
			return 1;
		}
	}
	expect_event(conn, RPMA_CONN_CLOSED);

	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
client(const char *addr, const char *port, enum test t, size_t size,
	long iters)
{
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct rpma_conn_private_data pdata, hello;
	struct common_data *data;
	size_t remote_size, buf_size = 2 * size, off;
	long warm = iters / 10 < 5 ? 5 : iters / 10, i;
	double *lat, t0, median;
	char hello_buf[64];
	struct ibv_wc wc;
	int got_send, got_recv;
	char *buf;

	lat = calloc((size_t)iters, sizeof(double));
	if (lat == NULL) {
		fprintf(stderr, "calloc failed\n");
		return 1;
	}
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE,
		&ibv_ctx));
	CHECK(rpma_peer_new(ibv_ctx, &peer));
	buf = alloc_buf(&buf_size);
	CHECK(rpma_mr_reg(peer, buf, buf_size,
		RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
		RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));

	snprintf(hello_buf, sizeof(hello_buf), "rpmabench %s %ld",
		test_names[t], t == T_SENDRECV ? warm + iters : 0);
	hello.ptr = hello_buf;
	hello.len = (uint8_t)(strlen(hello_buf) + 1);
	CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, &hello, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);
	CHECK(rpma_conn_get_cq(conn, &cq));

	CHECK(rpma_conn_get_private_data(conn, &pdata));
	if (pdata.ptr == NULL || pdata.len < sizeof(struct common_data)) {
		fprintf(stderr, "private data of %u bytes, want %zu\n",
			pdata.len, sizeof(struct common_data));
		return 1;
	}
	data = pdata.ptr;
	if ((size_t)data->mr_desc_size + data->pcfg_desc_size >
			DESCRIPTORS_MAX_SIZE) {
		fprintf(stderr, "descriptors of %u + %u bytes\n",
			data->mr_desc_size, data->pcfg_desc_size);
		return 1;
	}
	CHECK(rpma_mr_remote_from_descriptor(&data->descriptors[0],
		data->mr_desc_size, &remote));
	CHECK(rpma_peer_cfg_from_descriptor(
		&data->descriptors[data->mr_desc_size], data->pcfg_desc_size,
		&pcfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	CHECK(rpma_mr_remote_get_size(remote, &remote_size));
	off = data->data_offset;
	if (off + size > remote_size) {
		fprintf(stderr, "remote region of %zu bytes at %zu, want %zu\n",
			remote_size, off, size);
		return 1;
	}

	for (i = -warm; i < iters; i++) {
		t0 = now_us();
		switch (t) {
		case T_READ:
			CHECK(rpma_read(conn, mr, 0, remote, off, size,
				RPMA_F_COMPLETION_ALWAYS, NULL));
			poll_wc(cq, &wc);
			break;
		case T_WRITE_FLUSH:
			CHECK(rpma_write(conn, remote, off, mr, 0, size,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
			CHECK(rpma_flush(conn, remote, off, size,
				RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL));
			poll_wc(cq, &wc);
			break;
		case T_SENDRECV:
			CHECK(rpma_recv(conn, mr, size, size, NULL));
			CHECK(rpma_send(conn, mr, 0, size,
				RPMA_F_COMPLETION_ALWAYS, NULL));
			for (got_send = got_recv = 0; !got_send || !got_recv;) {
				poll_wc(cq, &wc);
				if (wc.opcode == IBV_WC_SEND)
					got_send = 1;
				else if (wc.opcode == IBV_WC_RECV)
					got_recv = 1;
			}
			break;
		}
		if (i >= 0)
			lat[i] = now_us() - t0;
	}

	CHECK(rpma_conn_disconnect(conn));
	expect_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_mr_remote_delete(&remote));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	free(buf);

	qsort(lat, (size_t)iters, sizeof(double), cmp_double);
	median = iters % 2 ? lat[iters / 2] :
		(lat[iters / 2 - 1] + lat[iters / 2]) / 2;
	if (t == T_SENDRECV)
		median /= 2;
	printf("RESULT test=%s bytes=%zu iters=%ld median_us=%.3f\n",
		test_names[t], size, iters, median);
	free(lat);
	return 0;
}

int
main(int argc, char *argv[])
{
	enum test t;

	if (argc == 5 && strcmp(argv[1], "server") == 0)
		return server(argv[2], argv[3],
			(size_t)parse_num(argv[4], 1, 1 << 20, "size"));
	if (argc == 7 && strcmp(argv[1], "client") == 0) {
		if (parse_test(argv[4], &t) != 0) {
			fprintf(stderr, "unknown test %s\n", argv[4]);
			return 2;
		}
		return client(argv[2], argv[3], t,
			(size_t)parse_num(argv[5], 1, 1 << 20, "size"),
			parse_num(argv[6], 1, 1 << 24, "iterations"));
	}
	fprintf(stderr, "usage: %s server <addr> <port> <size>\n"
		"       %s client <addr> <port> read|write_flush|sendrecv <size> <iters>\n",
		argv[0], argv[0]);
	return 2;
}
