// harness: rdma-core's own rxe and siw providers (Debian's static
// libibverbs, librxe-rdmav34, libsiw-rdmav34) driven through the public
// libibverbs API over a fake kernel, for purerdma's conformance tests.
//
// This is a test reference only, built by `make conformance` into .cache/
// and run by internal/provider/{rxe,siw}/conformance_test.go; it is not
// part of the library. Everything here is written for purerdma; it only
// follows the facts of the ABI (include/uapi/rdma, rdma-core v44).
//
// The fake kernel sits under libibverbs with the linker's --wrap:
//   - device discovery: rdma-core's netlink discovery function
//     (find_sysfs_devs_nl, a global symbol of libibverbs.a) is replaced by
//     one that returns a single device with the driver id of the provider
//     under test. The sysfs fallback cannot work for siw, whose match table
//     has only a driver id, which only netlink reports. SYSFS_PATH points at
//     a temporary directory holding class/infiniband_verbs/abi_version, the
//     one sysfs file libibverbs still reads, removed as soon as the device
//     list is read;
//   - open("/dev/infiniband/...") returns a descriptor of /dev/null (a
//     character device, as open_cdev checks), which is the command fd;
//   - ioctl on it fails with ENOTTY, so every command takes the legacy
//     write path; write on it is the fake kernel's command handler;
//   - mmap on it returns the harness's own queue memory, laid out as the
//     kernel lays out the mapped queues; munmap of that memory does nothing.
//
// The wrapping, the discovery and the script reader are in fake.c, which
// mlx5.c shares; this file has the rxe and siw answers and queues.
//
// The doorbell (a POST_SEND write with no work requests, for both
// providers) is counted instead of executed.
//
// Input on stdin, one command per line (see internal/provider/conformance
// for the grammar, which the Go side shares); output on stdout, one record
// per line, also described there.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/siw-abi.h>

#include "fake.h"

const char harness_name[] = "harness";

// ---- the provider's view of the device -------------------------------

enum { PROV_RXE = 1, PROV_SIW = 2 };
static int prov;
static int ud; // rxe-ud: the QP is UD, and sends name an address handle

// The address handle number the fake kernel gives (rxe_create_ah_resp).
#define AH_NUM 0x33

// Mapping keys (mmap offsets) the fake kernel hands out.
enum { KEY_CQ = 1 << 12, KEY_RQ = 2 << 12, KEY_SQ = 3 << 12, KEY_SRQ = 4 << 12 };

struct ring {
	uint8_t *buf;
	size_t size;  // bytes mapped
	uint32_t n;   // slots
	uint32_t log2; // rxe: log2 of the slot size
	uint32_t esz; // slot size in bytes
	size_t hdr;   // bytes before slot 0 (rxe: 384, siw: 0)
};
static struct ring sq, rq, srq, cq;

// siw: the fake kernel's cursors, the slot it takes next from each work
// queue and the slot it writes the next completion into.
static uint32_t kget_sq, kget_rq, kget_srq, kput_cq;

static uint32_t *kcursor(struct ring *r)
{
	if (r == &sq) return &kget_sq;
	if (r == &rq) return &kget_rq;
	if (r == &srq) return &kget_srq;
	return &kput_cq;
}

// The setup line's sizes: the slots of each queue and the QP and SRQ
// limits the fake kernel grants.
static struct fake_sizes sz;

static long doorbells;

static void ring_init(struct ring *r, uint32_t n, uint32_t esz, size_t hdr)
{
	size_t size;

	r->n = n;
	r->esz = esz;
	r->hdr = hdr;
	r->log2 = 0;
	while ((1u << r->log2) < esz)
		r->log2++;
	if (prov == PROV_RXE)
		r->esz = esz = 1u << r->log2; // rxe slots are a power of two
	size = hdr + (size_t)n * esz;
	if (prov == PROV_SIW && r == &cq)
		size += sizeof(struct siw_cq_ctrl);
	r->size = size;
	r->buf = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (!r->buf)
		die("out of memory");
	memset(r->buf, 0, (size + 4095) & ~(size_t)4095);
	if (prov == PROV_RXE) {
		struct rxe_queue_buf *q = (void *)r->buf;

		q->log2_elem_size = r->log2;
		q->index_mask = n - 1;
	}
}

static uint8_t *slot(struct ring *r, uint32_t i)
{
	return r->buf + r->hdr + (size_t)i * r->esz;
}

// ---- the fake kernel ---------------------------------------------------

void *kernel_mmap(size_t len, off_t off)
{
	struct ring *r = NULL;

	switch (off) {
	case KEY_CQ: r = &cq; break;
	case KEY_RQ: r = &rq; break;
	case KEY_SQ: r = &sq; break;
	case KEY_SRQ: r = &srq; break;
	}
	if (!r || !r->buf || len > ((r->size + 4095) & ~(size_t)4095)) {
		fprintf(stderr, "harness: mmap of %zu bytes at %#lx refused\n", len, (long)off);
		errno = EINVAL;
		return MAP_FAILED;
	}
	return r->buf;
}

int kernel_owns(const void *addr)
{
	return addr == sq.buf || addr == rq.buf || addr == srq.buf || addr == cq.buf;
}

static void put_resp(uint64_t to, const void *core, size_t core_len, const void *drv, size_t drv_len)
{
	uint8_t *p = (uint8_t *)(uintptr_t)to;

	memcpy(p, core, core_len);
	if (drv_len)
		memcpy(p + core_len, drv, drv_len);
}

// kernel_write answers the legacy and extended write commands the
// providers send while the harness sets up its objects.
ssize_t kernel_write(const void *buf, size_t n)
{
	const struct ib_uverbs_cmd_hdr *h = buf;
	const uint8_t *body = (const uint8_t *)buf + sizeof(*h);
	uint32_t cmd = h->command;
	uint64_t resp;

	if (cmd & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		const struct ib_uverbs_ex_cmd_hdr *ex = (const void *)body;

		resp = ex->response;
		body += sizeof(*ex);
		cmd &= IB_USER_VERBS_CMD_COMMAND_MASK;
		fprintf(stderr, "harness: extended command %u not faked\n", cmd);
		errno = EOPNOTSUPP;
		return -1;
	}
	resp = *(const uint64_t *)body;

	switch (cmd) {
	case IB_USER_VERBS_CMD_GET_CONTEXT: {
		struct ib_uverbs_get_context_resp r = { .async_fd = async_fd, .num_comp_vectors = 1 };
		struct siw_uresp_alloc_ctx d = { .dev_id = 1 };

		put_resp(resp, &r, sizeof(r), &d, prov == PROV_SIW ? sizeof(d) : 0);
		break;
	}
	case IB_USER_VERBS_CMD_ALLOC_PD: {
		struct ib_uverbs_alloc_pd_resp r = { .pd_handle = 1 };

		put_resp(resp, &r, sizeof(r), NULL, 0);
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_CQ: {
		struct ib_uverbs_create_cq_resp r = { .cq_handle = 2, .cqe = cq.n - 1 };

		if (prov == PROV_RXE) {
			struct rxe_create_cq_resp d = { .mi = { .offset = KEY_CQ, .size = cq.size } };

			put_resp(resp, &r, sizeof(r), &d, sizeof(d));
		} else {
			struct siw_uresp_create_cq d = { .cq_id = 2, .num_cqe = cq.n, .cq_key = KEY_CQ };

			r.cqe = cq.n;
			put_resp(resp, &r, sizeof(r), &d, sizeof(d));
		}
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_QP: {
		const struct ib_uverbs_create_qp *c = (const void *)body;
		struct ib_uverbs_create_qp_resp r = {
			.qp_handle = 7, .qpn = 0x11,
			.max_send_wr = sq.n - 1, .max_recv_wr = c->is_srq ? 0 : rq.n - 1,
			.max_send_sge = sz.max_send_sge, .max_recv_sge = sz.max_recv_sge,
			.max_inline_data = sz.max_inline,
		};

		if (prov == PROV_RXE) {
			struct rxe_create_qp_resp d = {
				.rq_mi = { .offset = c->is_srq ? 0 : KEY_RQ, .size = c->is_srq ? 0 : rq.size },
				.sq_mi = { .offset = KEY_SQ, .size = sq.size },
			};

			put_resp(resp, &r, sizeof(r), &d, sizeof(d));
		} else {
			struct siw_uresp_create_qp d = {
				.qp_id = 0x11, .num_sqe = sq.n, .num_rqe = c->is_srq ? 0 : rq.n,
				.sq_key = KEY_SQ, .rq_key = c->is_srq ? 0 : KEY_RQ,
			};

			r.max_send_wr = sq.n;
			r.max_recv_wr = c->is_srq ? 0 : rq.n;
			put_resp(resp, &r, sizeof(r), &d, sizeof(d));
		}
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_SRQ: {
		struct ib_uverbs_create_srq_resp r = {
			.srq_handle = 3, .max_wr = srq.n - 1, .max_sge = sz.srq_max_sge, .srqn = 0x21,
		};

		if (prov == PROV_RXE) {
			struct rxe_create_srq_resp d = { .mi = { .offset = KEY_SRQ, .size = srq.size }, .srq_num = 0x21 };

			put_resp(resp, &r, sizeof(r), &d, sizeof(d));
		} else {
			struct siw_uresp_create_srq d = { .num_rqe = srq.n, .srq_key = KEY_SRQ };

			r.max_wr = srq.n;
			put_resp(resp, &r, sizeof(r), &d, sizeof(d));
		}
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_AH: {
		struct ib_uverbs_create_ah_resp r = { .ah_handle = 4 };
		struct rxe_create_ah_resp d = { .ah_num = AH_NUM };

		put_resp(resp, &r, sizeof(r), &d, sizeof(d));
		break;
	}
	case IB_USER_VERBS_CMD_MODIFY_QP:
		break; // no response
	case IB_USER_VERBS_CMD_POST_SEND: {
		const struct ib_uverbs_post_send *c = (const void *)body;
		struct ib_uverbs_post_send_resp r = { 0 };

		if (c->wr_count != 0)
			die("POST_SEND with %u work requests: the providers post in user space", c->wr_count);
		doorbells++;
		put_resp(resp, &r, sizeof(r), NULL, 0);
		break;
	}
	default:
		fprintf(stderr, "harness: command %u not faked\n", cmd);
		errno = EOPNOTSUPP;
		return -1;
	}
	return n;
}

// ---- the script --------------------------------------------------------

static void hexdump(const char *what, struct ring *r, uint32_t i)
{
	const uint8_t *p = slot(r, i);

	printf("slot %s %u ", what, i);
	hex(stdout, p, r->esz);
	printf("\n");
}

static uint32_t *idx(struct ring *r, int producer)
{
	struct rxe_queue_buf *q = (void *)r->buf;

	return producer ? &q->producer_index : &q->consumer_index;
}

// dump prints a queue's indices (rxe) and every slot.
static void dump(const char *what, struct ring *r)
{
	if (prov == PROV_RXE)
		printf("index %s %u %u\n", what, *idx(r, 1), *idx(r, 0));
	else if (r == &cq)
		printf("ctrl %u\n", ((struct siw_cq_ctrl *)slot(&cq, cq.n))->flags);
	for (uint32_t i = 0; i < r->n; i++)
		hexdump(what, r, i);
}

static struct ring *ring_named(const char *s)
{
	if (!strcmp(s, "sq")) return &sq;
	if (!strcmp(s, "rq")) return &rq;
	if (!strcmp(s, "srq")) return &srq;
	if (!strcmp(s, "cq")) return &cq;
	die("no queue %s", s);
	return NULL;
}

// cqe writes a completion into the CQ ring as the kernel would, and
// publishes it.
static void cqe(char **save)
{
	if (prov == PROV_RXE) {
		uint32_t p = *idx(&cq, 1);
		struct ib_uverbs_wc *w = (void *)slot(&cq, p);

		memset(w, 0, sizeof(*w));
		w->wr_id = num(save);
		w->status = num(save);
		w->opcode = num(save);
		w->vendor_err = num(save);
		w->byte_len = num(save);
		w->ex.imm_data = num(save); // the ring's raw word
		w->qp_num = num(save);
		w->src_qp = num(save);
		w->wc_flags = num(save);
		w->pkey_index = num(save);
		w->slid = num(save);
		w->sl = num(save);
		w->dlid_path_bits = num(save);
		w->port_num = num(save);
		__atomic_store_n(idx(&cq, 1), (p + 1) & (cq.n - 1), __ATOMIC_RELEASE);
	} else {
		// id flags opcode status bytes imm qp_id: the body first, the
		// flags byte (with SIW_WQE_VALID) last, as siw_cq.c does.
		struct siw_cqe *c = (void *)slot(&cq, kput_cq);
		uint8_t flags;

		memset(c, 0, sizeof(*c));
		c->id = num(save);
		flags = num(save);
		c->opcode = num(save);
		c->status = num(save);
		c->bytes = num(save);
		c->imm_data = num(save);
		c->qp_id = num(save);
		__atomic_store_n(&c->flags, flags, __ATOMIC_RELEASE);
		kput_cq = (kput_cq + 1) % cq.n;
	}
}

static void setup(char **save)
{
	read_sizes(save, &sz);

	if (prov == PROV_RXE) {
		// Slot sizes as the kernel's rxe_qp.c and rxe_srq.c choose them:
		// the WQE header and its SGEs (or inline data), rounded up to a
		// power of two by the queue code.
		uint32_t hdr = sizeof(struct rxe_queue_buf);
		uint32_t sqdata = sz.max_send_sge * sizeof(struct rxe_sge);

		if (sz.max_inline > sqdata)
			sqdata = sz.max_inline;
		ring_init(&sq, sz.sq, sizeof(struct rxe_send_wqe) + sqdata, hdr);
		if (sz.rq)
			ring_init(&rq, sz.rq, sizeof(struct rxe_recv_wqe) + sz.max_recv_sge * sizeof(struct rxe_sge), hdr);
		if (sz.srq)
			ring_init(&srq, sz.srq, sizeof(struct rxe_recv_wqe) + sz.srq_max_sge * sizeof(struct rxe_sge), hdr);
		ring_init(&cq, sz.cq, sizeof(struct ib_uverbs_wc), hdr);
	} else {
		ring_init(&sq, sz.sq, sizeof(struct siw_sqe), 0);
		if (sz.rq)
			ring_init(&rq, sz.rq, sizeof(struct siw_rqe), 0);
		if (sz.srq)
			ring_init(&srq, sz.srq, sizeof(struct siw_rqe), 0);
		ring_init(&cq, sz.cq, sizeof(struct siw_cqe), 0);
	}

	static const struct fake_device rxe = { "rxe0", RDMA_DRIVER_RXE, IBV_NODE_CA, 2 };
	static const struct fake_device siw = { "siw0", RDMA_DRIVER_SIW, IBV_NODE_RNIC, SIW_ABI_VERSION };
	static const struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };
	struct ibv_srq_attr sa = { .max_wr = sz.srq - 1, .max_sge = sz.srq_max_sge };
	struct fake_setup fs = {
		.dev = prov == PROV_RXE ? &rxe : &siw,
		.cqe = sz.cq - 1,
		.ah = ud ? &aa : NULL,
		.srq = sz.srq ? &sa : NULL,
		.shared = !sz.rq,
		.cap = { .max_send_wr = sz.sq - 1, .max_recv_wr = sz.rq ? sz.rq - 1 : 0,
			 .max_send_sge = sz.max_send_sge, .max_recv_sge = sz.max_recv_sge,
			 .max_inline_data = sz.max_inline },
		.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC,
		// rxe refuses receives on a QP in RESET (rdma-core's
		// rxe_post_recv).
		.state = IBV_QPS_INIT,
	};

	fake_create(&fs);
	printf("ready\n");
}

// ---- host cost -----------------------------------------------------------

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// kernel_take plays the kernel taking every published slot of r.
static void kernel_take(struct ring *r)
{
	__atomic_store_n(idx(r, 0), __atomic_load_n(idx(r, 1), __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

static void take_sq_rxe(void) { kernel_take(&sq); }
static void take_rq_rxe(void) { kernel_take(&rq); }
static void siw_take(struct ring *r);
static void take_sq_siw(void) { siw_take(&sq); }
static void take_rq_siw(void) { siw_take(&rq); }

// cq_refill makes the rxe CQ full again, of the entries already in it.
static void cq_refill(void)
{
	__atomic_store_n(idx(&cq, 1), (*idx(&cq, 0) + cq.n - 1) & (cq.n - 1), __ATOMIC_RELEASE);
}

// siw_take plays the kernel taking every valid element of a siw work
// queue: it clears their flags.
static void siw_take(struct ring *r)
{
	for (uint32_t k = 0; k < r->n; k++)
		__atomic_store_n((uint16_t *)(slot(r, k) + 8), 0, __ATOMIC_RELEASE);
}

// siw_cq_refill makes every element of the siw CQ valid again.
static void siw_cq_refill(void)
{
	for (uint32_t k = 0; k < cq.n; k++)
		__atomic_store_n(&((struct siw_cqe *)slot(&cq, k))->flags, SIW_WQE_VALID, __ATOMIC_RELEASE);
}

// The requests of the bench and count rows: w[16] chained RDMA writes of
// sg, the receive rw.
static struct ibv_sge bench_sg = { .addr = 0x10000, .length = 4096, .lkey = 0x55 };
static struct ibv_send_wr bench_w[16];
static struct ibv_recv_wr bench_rw = { .wr_id = 1, .sg_list = &bench_sg, .num_sge = 1 };

// The fake kernel's work between operations: take the posted send or
// receive slots, make the CQ full again.
static void (*bench_take_sq)(void), (*bench_take_rq)(void), (*bench_refill)(void);

// bench_prepare builds the requests and, for the poll rows (not
// pollempty), fills every CQ slot with a receive (rxe: with immediate
// data) and makes the CQ full.
static void bench_prepare(const char *row)
{
	if (prov == PROV_RXE) {
		bench_take_sq = take_sq_rxe;
		bench_take_rq = take_rq_rxe;
		bench_refill = cq_refill;
	} else {
		bench_take_sq = take_sq_siw;
		bench_take_rq = take_rq_siw;
		bench_refill = siw_cq_refill;
	}
	for (int k = 0; k < 16; k++) {
		bench_w[k] = (struct ibv_send_wr){ .wr_id = k, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.sg_list = &bench_sg, .num_sge = 1, .wr.rdma = { .remote_addr = 0xdead0000, .rkey = 0x77 },
			.next = k < 15 ? &bench_w[k + 1] : NULL };
	}
	if (!strncmp(row, "poll", 4) && strcmp(row, "pollempty") && prov == PROV_SIW) {
		// Every element holds a receive.
		for (uint32_t k = 0; k < cq.n; k++) {
			struct siw_cqe *e = (void *)slot(&cq, k);

			memset(e, 0, sizeof(*e));
			e->id = 9;
			e->opcode = SIW_OP_RECEIVE;
			e->bytes = 4096;
			e->qp_id = 0x11;
		}
		siw_cq_refill();
	} else if (!strncmp(row, "poll", 4) && strcmp(row, "pollempty")) {
		// Every slot holds a receive with immediate data.
		for (uint32_t k = 0; k < cq.n; k++) {
			struct ib_uverbs_wc *e = (void *)slot(&cq, k);

			memset(e, 0, sizeof(*e));
			e->wr_id = 9;
			e->opcode = IBV_WC_RECV;
			e->byte_len = 4096;
			e->qp_num = 0x11;
			e->wc_flags = IBV_WC_WITH_IMM;
			e->ex.imm_data = htonl(0x01020304);
		}
		cq_refill();
	}
}

// bench times iters operations of one row of the host cost table,
// as the Go side's rows in uverbs/hostcost_test.go and cq/hostcost_test.go
// do, and prints the time per operation.
static void bench(const char *row, long iters)
{
	struct ibv_send_wr *bad, *w = bench_w;
	struct ibv_recv_wr rw = bench_rw, *rbad;
	struct ibv_wc wc[16];
	double t0, t1;
	long i;

	bench_prepare(row);
	t0 = now_ns();
	if (!strcmp(row, "send1")) {
		struct ibv_send_wr one = w[15];

		for (i = 0; i < iters; i++) {
			one.wr_id = i;
			if (ibv_post_send(verbs.qp, &one, &bad))
				die("post send");
			if (i % 256 == 255)
				bench_take_sq();
		}
	} else if (!strcmp(row, "send16")) {
		for (i = 0; i < iters; i++) {
			if (ibv_post_send(verbs.qp, &w[0], &bad))
				die("post send");
			if (i % 16 == 15)
				bench_take_sq();
		}
	} else if (!strcmp(row, "recv1")) {
		for (i = 0; i < iters; i++) {
			rw.wr_id = i;
			if (ibv_post_recv(verbs.qp, &rw, &rbad))
				die("post recv");
			if (i % 256 == 255)
				bench_take_rq();
		}
	} else if (!strcmp(row, "pollempty")) {
		for (i = 0; i < iters; i++)
			if (ibv_poll_cq(verbs.cq, 1, wc) != 0)
				die("poll of an empty CQ");
	} else if (!strcmp(row, "poll1") || !strcmp(row, "poll16")) {
		int k = row[4] == '1' && row[5] == '6' ? 16 : 1;

		for (i = 0; i < iters; i++) {
			int got = ibv_poll_cq(verbs.cq, k, wc);

			if (got < k) {
				bench_refill();
				if (ibv_poll_cq(verbs.cq, k - got, wc + got) != k - got)
					die("poll after refill");
			}
		}
		if (wc[0].wr_id != 9 || (prov == PROV_RXE && ntohl(wc[0].imm_data) != 0x01020304))
			die("poll: wrong completion");
	} else {
		die("bench: no row %s", row);
	}
	t1 = now_ns();
	printf("bench %s %.3f\n", row, (t1 - t0) / iters);
}

// ---- instructions per operation (the count command) ----------------------
//
// count ROW OPS runs OPS operations of one row, for callgrind
// (internal/provider/conformance, HostCost): the operations run in the
// hostloop_ functions only, which valgrind --toggle-collect counts, and
// the fake kernel's work between their calls, which it does not; the
// doorbell's write (__wrap_write), called from inside them, is toggled
// off again. The Go side's loops are hostLoop* in uverbs/hostcost_test.go
// and cq/hostcost_test.go, over the same chunks: 256 requests between
// two takes, a full CQ's worth of polls between two refills. The loops
// are in fake.c.


static void count(const char *row, long ops)
{
	struct ibv_send_wr one;
	struct ibv_recv_wr rw = bench_rw;
	struct ibv_wc wc[16];
	long chunk;
	int k = 0;

	bench_prepare(row);
	one = bench_w[15];
	if (!strcmp(row, "send1") || !strcmp(row, "recv1"))
		chunk = 256;
	else if (!strcmp(row, "send16"))
		chunk = 16;
	else if (!strcmp(row, "pollempty"))
		chunk = ops;
	else if (!strcmp(row, "poll1") || !strcmp(row, "poll16")) {
		// rxe's ring holds one completion less than it has slots.
		k = row[5] == '6' ? 16 : 1;
		chunk = (prov == PROV_RXE ? cq.n - 1 : cq.n) / k;
	} else
		die("count: no row %s", row);
	for (long done = 0; done < ops; done += chunk) {
		long c = ops - done < chunk ? ops - done : chunk;
		int err;

		if (!strcmp(row, "send1"))
			err = hostloop_send(&one, c);
		else if (!strcmp(row, "send16"))
			err = hostloop_send(&bench_w[0], c);
		else if (!strcmp(row, "recv1"))
			err = hostloop_recv(&rw, c);
		else
			err = hostloop_poll(wc, k ? k : 1, k, c);
		if (err)
			die("count %s: an operation failed", row);
		if (!strncmp(row, "send", 4))
			bench_take_sq();
		else if (!strcmp(row, "recv1"))
			bench_take_rq();
		else if (k)
			bench_refill();
	}
	printf("count %s %ld\n", row, ops);
}

int main(void)
{
	char *save, *t;
	int ops = 0;

	fake_init();

	while ((t = next_command(&save))) {
		if (!strcmp(t, "rxe") || !strcmp(t, "rxe-ud") || !strcmp(t, "siw")) {
			prov = t[0] == 'r' ? PROV_RXE : PROV_SIW;
			ud = !strcmp(t, "rxe-ud");
			setup(&save);
		} else if (!strcmp(t, "send")) {
			int n = num(&save);
			long db = doorbells;
			int got = post_send(n, ud ? UD_SENDS : UD_NONE);

			printf("op %d send %d %d db %ld\n", ops++, n, got, doorbells - db);
		} else if (!strcmp(t, "recv") || !strcmp(t, "srecv")) {
			int shared = t[0] == 's';
			int n = num(&save);
			long db = doorbells;
			int got = post_recv(n, shared);

			printf("op %d %s %d %d db %ld\n", ops++, shared ? "srecv" : "recv", n, got, doorbells - db);
		} else if (!strcmp(t, "consume")) {
			// The kernel takes k slots: the consumer index moves on
			// and the slots are zeroed, so that a reused slot starts
			// as a fresh one on both sides (see docs/conformance.md).
			struct ring *r = ring_named(strtok_r(NULL, " \t\n", &save));
			uint32_t k = num(&save);

			for (uint32_t j = 0; j < k; j++) {
				if (prov == PROV_SIW) {
					// siw hands a slot back by clearing its
					// flags; the rest is zeroed too.
					uint32_t *c = kcursor(r);

					memset(slot(r, *c), 0, r->esz);
					*c = (*c + 1) % r->n;
					continue;
				}
				uint32_t c = *idx(r, 0);

				memset(slot(r, c), 0, r->esz);
				__atomic_store_n(idx(r, 0), (c + 1) & (r->n - 1), __ATOMIC_RELEASE);
			}
		} else if (!strcmp(t, "cqe")) {
			cqe(&save);
		} else if (!strcmp(t, "bench")) {
			char *row = word(&save, "bench");

			bench(row, num(&save));
		} else if (!strcmp(t, "count")) {
			char *row = word(&save, "count");

			count(row, num(&save));
		} else if (!strcmp(t, "arm")) {
			if (ibv_req_notify_cq(verbs.cq, num(&save)))
				die("ibv_req_notify_cq: %s", strerror(errno));
		} else if (!strcmp(t, "poll")) {
			poll_cq(num(&save), NULL);
		} else if (!strcmp(t, "dump")) {
			char *q = word(&save, "dump");

			dump(q, ring_named(q));
		} else {
			die("unknown command %s", t);
		}
	}
	fflush(stdout);
	return 0;
}
