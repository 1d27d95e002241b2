/*
 * peer: a librpma peer for the Go rpma package's interop tests
 * (test/rpmainterop; hack/vm builds it with -ctools).
 *
 *	peer server <addr> <port>
 *	peer client <addr> <port>
 *
 * The server registers a 4096-byte buffer that starts with "C server
 * memory", listens (printing "listening"), accepts one connection with
 * the buffer's MR descriptor and its peer config descriptor as private
 * data (struct common_data, as librpma's examples send it), waits until
 * the client disconnects and prints its buffer's first 128 bytes as
 * "server memory: ..." with NULs and unprintable bytes as '.'.
 *
 * The client connects, decodes the server's common_data, reads the first
 * 16 bytes of the server's memory (printing "read: ..."), writes "written
 * by C" at offset 100, flushes it for visibility, waits for the flush's
 * completion, writes "C atomic" at offset 120 with rpma_atomic_write,
 * prints the opcode of its completion as "atomic write opcode: N" and
 * disconnects.
 *
 * Every failure is printed to stderr; the exit status is then 1.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <librpma.h>

#include "rpmapeer.h"

#define BUF_SIZE 4096
#define WINDOW 128
#define WRITE_OFFSET 100
#define ATOMIC_OFFSET 120	/* 8-byte aligned, inside the printed window */

/*
 * wait_wc waits for one successful completion and returns its opcode, for
 * operations whose opcode says how librpma carried them out.
 */
static enum ibv_wc_opcode
wait_wc(struct rpma_conn *conn, const char *what)
{
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	CHECK(rpma_conn_get_cq(conn, &cq));
	while ((ret = rpma_cq_get_wc(cq, 1, &wc, NULL)) != 0) {
		if (ret != RPMA_E_NO_COMPLETION) {
			fprintf(stderr, "rpma_cq_get_wc (%s): %s\n", what,
				rpma_err_2str(ret));
			exit(1);
		}
		ret = rpma_cq_wait(cq);
		if (ret && ret != RPMA_E_NO_COMPLETION) {
			fprintf(stderr, "rpma_cq_wait (%s): %s\n", what,
				rpma_err_2str(ret));
			exit(1);
		}
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s completion: %s\n", what,
			ibv_wc_status_str(wc.status));
		exit(1);
	}
	return wc.opcode;
}

/* wait_completion waits for one completion and checks it. */
static void
wait_completion(struct rpma_conn *conn, enum ibv_wc_opcode op, const char *what)
{
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	CHECK(rpma_conn_get_cq(conn, &cq));
	for (;;) {
		ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == 0)
			break;
		if (ret != RPMA_E_NO_COMPLETION) {
			fprintf(stderr, "rpma_cq_get_wc (%s): %s\n", what,
				rpma_err_2str(ret));
			exit(1);
		}
		ret = rpma_cq_wait(cq);
		if (ret && ret != RPMA_E_NO_COMPLETION) {
			fprintf(stderr, "rpma_cq_wait (%s): %s\n", what,
				rpma_err_2str(ret));
			exit(1);
		}
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s completion: %s\n", what,
			ibv_wc_status_str(wc.status));
		exit(1);
	}
	if (wc.opcode != op) {
		fprintf(stderr, "%s completion: opcode %d, want %d\n", what,
			wc.opcode, op);
		exit(1);
	}
}

static int
server(const char *addr, const char *port)
{
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct common_data data;
	struct rpma_conn_private_data pdata;
	size_t buf_size = BUF_SIZE;
	char window[WINDOW + 1];
	char *buf;
	int i;

	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
		&ibv_ctx));
	CHECK(rpma_peer_new(ibv_ctx, &peer));
	buf = alloc_buf(&buf_size);
	strcpy(buf, "C server memory");
	CHECK(rpma_mr_reg(peer, buf, BUF_SIZE,
		RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
		RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));

	CHECK(rpma_peer_cfg_new(&pcfg));
	describe(mr, pcfg, &data);
	pdata.ptr = &data;
	pdata.len = sizeof(data);

	listen_announced(peer, addr, port, &ep);

	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);
	printf("established\n");
	fflush(stdout);
	expect_event(conn, RPMA_CONN_CLOSED);

	for (i = 0; i < WINDOW; i++)
		window[i] = isprint((unsigned char)buf[i]) ? buf[i] : '.';
	window[WINDOW] = '\0';
	printf("server memory: %s\n", window);
	fflush(stdout);

	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

static int
client(const char *addr, const char *port)
{
	static const char msg[] = "written by C";
	static const char atomic_msg[8] = {'C', ' ', 'a', 't', 'o', 'm', 'i', 'c'};
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data pdata;
	struct common_data *data;
	size_t remote_size, buf_size = BUF_SIZE;
	int flush_type;
	char *buf;

	/*
	 * librpma's informational lines on stderr: rpma_peer_new says there
	 * "Native atomic write is not supported" when it will emulate, which
	 * the Go test reads. The primary threshold lets a message through at
	 * all, the auxiliary one on to stderr.
	 */
	CHECK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
		RPMA_LOG_LEVEL_INFO));
	CHECK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
		RPMA_LOG_LEVEL_INFO));
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE,
		&ibv_ctx));
	CHECK(rpma_peer_new(ibv_ctx, &peer));
	buf = alloc_buf(&buf_size);
	CHECK(rpma_mr_reg(peer, buf, BUF_SIZE,
		RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC, &mr));

	CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);

	CHECK(rpma_conn_get_private_data(conn, &pdata));
	if (pdata.ptr == NULL || pdata.len < sizeof(struct common_data)) {
		fprintf(stderr, "private data of %u bytes, want %zu\n",
			pdata.len, sizeof(struct common_data));
		return 1;
	}
	data = pdata.ptr;
	printf("private data: data_offset %u mr_desc_size %u pcfg_desc_size %u\n",
		data->data_offset, data->mr_desc_size, data->pcfg_desc_size);
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
	CHECK(rpma_mr_remote_get_flush_type(remote, &flush_type));
	printf("remote: %zu bytes, flush type %#x\n", remote_size, flush_type);

	CHECK(rpma_read(conn, mr, 0, remote, data->data_offset, 16,
		RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_completion(conn, IBV_WC_RDMA_READ, "read");
	buf[16] = '\0';
	printf("read: %s\n", buf);

	memcpy(buf + WRITE_OFFSET, msg, sizeof(msg) - 1);
	CHECK(rpma_write(conn, remote, WRITE_OFFSET, mr, WRITE_OFFSET,
		sizeof(msg) - 1, RPMA_F_COMPLETION_ON_ERROR, NULL));
	CHECK(rpma_flush(conn, remote, WRITE_OFFSET, sizeof(msg) - 1,
		RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_completion(conn, IBV_WC_RDMA_READ, "flush");
	printf("written and flushed\n");
	fflush(stdout);

	/*
	 * librpma 1.2 built against rdma-core 44 or later uses native atomic
	 * write when the device has it (opcode IBV_WC_ATOMIC_WRITE, 9), else
	 * a fenced inline RDMA write (IBV_WC_RDMA_WRITE, 1): the Go test
	 * checks which. Debian 12's librpma0 1.2.0-1 was built without it.
	 */
	CHECK(rpma_atomic_write(conn, remote, ATOMIC_OFFSET, atomic_msg,
		RPMA_F_COMPLETION_ALWAYS, NULL));
	printf("atomic write opcode: %d\n", (int)wait_wc(conn, "atomic write"));
	fflush(stdout);

	CHECK(rpma_conn_disconnect(conn));
	expect_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_mr_remote_delete(&remote));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc == 4 && strcmp(argv[1], "server") == 0)
		return server(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "client") == 0)
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: %s server|client <addr> <port>\n", argv[0]);
	return 2;
}
