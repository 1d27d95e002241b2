/*
 * rpmapeer.h -- what the C librpma test peers (test/<name>/testdata/peer.c)
 * share: librpma examples' private data, error checks, buffers, and the
 * server's start. hack/vm compiles every peer with -I test/include.
 */
#ifndef RPMAPEER_H
#define RPMAPEER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>

#define DESCRIPTORS_MAX_SIZE 24
#define PEER_PAGE 4096

/* what the server sends as private data, as in librpma's examples */
struct common_data {
	uint16_t data_offset;	/* where the data starts in the server's MR */
	uint8_t mr_desc_size;	/* the MR descriptor's size */
	uint8_t pcfg_desc_size;	/* the peer config descriptor's size */
	/* the MR descriptor, then the peer config descriptor */
	char descriptors[DESCRIPTORS_MAX_SIZE];
};

/* CHECK exits with the librpma error of a failed call. */
#define CHECK(call)                                                         \
	do {                                                                \
		int ret_ = (call);                                          \
		if (ret_) {                                                 \
			fprintf(stderr, "%s:%d: %s: %s (%d)\n", __FILE__,   \
				__LINE__, #call, rpma_err_2str(ret_), ret_); \
			exit(1);                                            \
		}                                                           \
	} while (0)

/* alloc_buf returns *n zeroed bytes, page-aligned, *n rounded up to pages. */
static inline void *
alloc_buf(size_t *n)
{
	void *buf = NULL;

	*n = (*n + PEER_PAGE - 1) / PEER_PAGE * PEER_PAGE;
	if (posix_memalign(&buf, PEER_PAGE, *n) != 0) {
		fprintf(stderr, "posix_memalign failed\n");
		exit(1);
	}
	memset(buf, 0, *n);
	return buf;
}

/* expect_event waits for the connection's next event and checks it. */
static inline void
expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;

	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != want) {
		fprintf(stderr, "connection event: %s, want %s\n",
			rpma_utils_conn_event_2str(ev),
			rpma_utils_conn_event_2str(want));
		exit(1);
	}
}

/*
 * describe packs mr's and pcfg's descriptors into data, at offset 0, as
 * the examples' servers do.
 */
static inline void
describe(struct rpma_mr_local *mr, struct rpma_peer_cfg *pcfg,
	struct common_data *data)
{
	size_t mr_desc_size, pcfg_desc_size;

	CHECK(rpma_mr_get_descriptor_size(mr, &mr_desc_size));
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_desc_size));
	if (mr_desc_size + pcfg_desc_size > DESCRIPTORS_MAX_SIZE) {
		fprintf(stderr, "descriptors of %zu + %zu bytes\n",
			mr_desc_size, pcfg_desc_size);
		exit(1);
	}
	memset(data, 0, sizeof(*data));
	data->mr_desc_size = (uint8_t)mr_desc_size;
	data->pcfg_desc_size = (uint8_t)pcfg_desc_size;
	CHECK(rpma_mr_get_descriptor(mr, &data->descriptors[0]));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg,
		&data->descriptors[mr_desc_size]));
}

/*
 * listen_announced listens and prints "listening", which the Go tests wait
 * for before they start a client: an RDMA listener shows in no socket table.
 */
static inline void
listen_announced(struct rpma_peer *peer, const char *addr, const char *port,
	struct rpma_ep **ep)
{
	CHECK(rpma_ep_listen(peer, addr, port, ep));
	printf("listening\n");
	fflush(stdout);
}

#endif /* RPMAPEER_H */
