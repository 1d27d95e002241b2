// mlx5: rdma-core's own mlx5 provider (Debian's static libmlx5 and
// libibverbs) driven through the public libibverbs API over a fake kernel
// and a fake device, for purerdma's mlx5 conformance tests.
//
// This is a test reference only, built by `make conformance` into .cache/
// and run by internal/provider/mlx5/conformance_test.go; it is not part of
// the library. Everything here is written for purerdma; it only follows the
// facts of the ABI (include/uapi/rdma/mlx5-abi.h, the mlx5 WQE and CQE
// layouts of mlx5dv.h, rdma-core v44).
//
// The fake kernel sits under libibverbs with the linker's --wrap, as in
// harness.c and with the plumbing of fake.c they share: netlink discovery returns one device with RDMA_DRIVER_MLX5,
// open("/dev/infiniband/...") gives a descriptor of /dev/null, ioctl on it
// fails with ENOTTY (so every command is a write; in the mlx5dyn setups
// all but the UAR object's methods, see uar_ioctl), and write on it is the
// command handler below. Unlike rxe and siw, libmlx5 allocates its queues
// and doorbell records itself and tells the kernel their addresses in the
// driver part of each create command; the fake kernel (and the fake device
// behind it) finds them only there. mmap on the command fd returns plain
// page-aligned memory in place of the device's UAR pages; what the library
// stores into them (doorbells and BlueFlame copies) is printed after each
// operation and then cleared.
//
// The kernel's answers are fixed (see the constants below and
// docs/conformance.md); the ones that depend on the request (the CQ's
// size, the granted QP capacities) echo it, as the kernel does.
//
// Input on stdin, output on stdout, one record per line; the grammar is in
// internal/provider/conformance. Run with -v to trace the commands on
// stderr.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
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
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "fake.h"

const char harness_name[] = "mlx5 harness";

// ---- the fake device's fixed answers -----------------------------------

enum {
	PAGE = 4096,
	// GET_CONTEXT (struct mlx5_ib_alloc_ucontext_resp)
	QP_TAB_SIZE = 1 << 18,
	BF_REG_SIZE = 512,
	TOT_BFREGS = 16, // the library's default request, granted
	CACHE_LINE = 64,
	MAX_SQ_DESC = 1024,
	MAX_RQ_DESC = 512,
	MAX_SEND_WQEBB = 1 << 15,
	MAX_RECV_WR = 1 << 15,
	MAX_SRQ_RECV_WR = (1 << 15) - 1,
	CQE_VERSION = 1,
	CMDS_SUPP_UHW = MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE | MLX5_USER_CMDS_SUPP_UHW_CREATE_AH,
	LOG_UAR_SIZE = 12,
	UARS_PER_PAGE = 1,
	// object numbers
	PDN = 0x5,
	CQN = 0x3c,
	SRQN = 0x21,
	QPN = 0xabc,
	// the bfreg the kernel gives the QP (struct mlx5_ib_create_qp_resp):
	// the second register of the second UAR page, which has a BlueFlame
	// buffer.
	QP_BFREG = 5,
	// Dynamic UARs (the mlx5dyn setups). Linux (6.1, 6.12:
	// mlx5_ib_alloc_ucontext) skips the static UARs altogether for a
	// library that asks for MLX5_LIB_CAP_DYN_UAR, so tot_bfregs and
	// num_dyn_bfregs are both 0. Each MLX5_IB_METHOD_UAR_OBJ_ALLOC then
	// inserts an mmap entry of one page into the context's range, which
	// starts at page offset 9 << 16 (MLX5_IB_MMAP_OFFSET_START), and
	// turns its page offset into the mmap offset the command number 9
	// in bits 8-15 and the index's low byte in bits 0-7, in pages
	// (mlx5_entry_to_mmap_offset); the page id is the firmware's UAR
	// index, any number: here they count up from DYN_PAGE_ID.
	DYN_MMAP_CMD = 9,
	DYN_PAGE_ID = 0x40,
	DYN_HANDLE = 0x10,
};

// The address handle of mlx5-ud (an InfiniBand port: no CREATE_AH).
static const struct ibv_ah_attr ud_ah = {
	.grh = {
		.dgid = { .raw = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 } },
		.flow_label = 0x12345,
		.sgid_index = 2,
		.hop_limit = 64,
		.traffic_class = 0x22,
	},
	.dlid = 0x1234,
	.sl = 5,
	.src_path_bits = 0x11,
	.static_rate = IBV_RATE_10_GBPS,
	.is_global = 1,
	.port_num = 1,
};

// ---- what the fake kernel learnt from the create commands ------------

struct uar_map {
	uint64_t off;
	uint8_t *page;
	size_t len;
};
static struct uar_map uars[64];
static int nuars;

// dyn: the kernel hands out no static UARs (the mlx5dyn setups); ndyn
// counts the UAR objects allocated.
static int dyn;
static uint32_t ndyn;

// The queues, as the create commands describe them.
static struct {
	uint8_t *buf;
	uint32_t *db;
	uint32_t n; // entries (cqe + 1)
	uint32_t put; // the device's producer count
} cq;
static struct {
	uint8_t *buf;
	uint32_t *db;
	uint32_t n, stride;
} srq;
static struct {
	uint8_t *buf, *sq;
	uint32_t *db;
	uint32_t sq_bbs, rq_n, rq_stride;
	int exists;
} qp;

// The setup records, printed after "ready".
static char *setup_out;
static size_t setup_len;
static FILE *setup_f;

// page_offset replaces an address field of a request copy by its offset
// within its page: the addresses differ between processes.
static void page_offset(uint8_t *req, size_t len, size_t off)
{
	uint64_t a;

	if (off + 8 > len)
		return;
	memcpy(&a, req + off, 8);
	a &= PAGE - 1;
	memcpy(req + off, &a, 8);
}

static void record_cmd(const char *name, const void *drv, size_t len, const size_t *addrs, int naddrs)
{
	uint8_t copy[512];

	if (len > sizeof(copy))
		die("%s: driver request of %zu bytes", name, len);
	memcpy(copy, drv, len);
	for (int i = 0; i < naddrs; i++)
		page_offset(copy, len, addrs[i]);
	fprintf(setup_f, "cmd %s ", name);
	hex(setup_f, copy, len);
	fprintf(setup_f, "\n");
}

static uint32_t pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

// ---- the fake kernel ---------------------------------------------------

// mmap of the command fd gives a UAR page: plain zeroed memory.
void *kernel_mmap(size_t len, off_t off)
{
	uint8_t *p;

	trace("mmap %zu bytes at %#lx", len, (long)off);
	if (len != PAGE || nuars == (int)(sizeof(uars) / sizeof(uars[0]))) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	p = aligned_alloc(PAGE, PAGE);
	if (!p)
		die("out of memory");
	memset(p, 0, PAGE);
	uars[nuars++] = (struct uar_map){ .off = off, .page = p, .len = len };
	return p;
}

int kernel_owns(const void *addr)
{
	for (int i = 0; i < nuars; i++)
		if (addr == uars[i].page)
			return 1;
	return 0;
}

// A command: the write's core request and driver request, and where the
// response goes.
struct cmd {
	uint32_t op;
	int ex;
	const uint8_t *core;
	size_t core_in;
	const uint8_t *drv; // the driver request (udata in)
	size_t drv_in;
	uint8_t *resp; // the core response
	size_t core_out; // bytes of the core response
	uint8_t *drv_out; // the driver response
	size_t drv_out_len;
};

static const char *cmd_name(uint32_t op)
{
	switch (op) {
	case IB_USER_VERBS_CMD_GET_CONTEXT: return "GET_CONTEXT";
	case IB_USER_VERBS_CMD_QUERY_DEVICE: return "QUERY_DEVICE";
	case IB_USER_VERBS_CMD_QUERY_PORT: return "QUERY_PORT";
	case IB_USER_VERBS_CMD_ALLOC_PD: return "ALLOC_PD";
	case IB_USER_VERBS_CMD_DEALLOC_PD: return "DEALLOC_PD";
	case IB_USER_VERBS_CMD_CREATE_AH: return "CREATE_AH";
	case IB_USER_VERBS_CMD_DESTROY_AH: return "DESTROY_AH";
	case IB_USER_VERBS_CMD_CREATE_CQ: return "CREATE_CQ";
	case IB_USER_VERBS_CMD_DESTROY_CQ: return "DESTROY_CQ";
	case IB_USER_VERBS_CMD_CREATE_QP: return "CREATE_QP";
	case IB_USER_VERBS_CMD_MODIFY_QP: return "MODIFY_QP";
	case IB_USER_VERBS_CMD_DESTROY_QP: return "DESTROY_QP";
	case IB_USER_VERBS_CMD_CREATE_SRQ: return "CREATE_SRQ";
	case IB_USER_VERBS_CMD_DESTROY_SRQ: return "DESTROY_SRQ";
	}
	return "?";
}

// parse splits a write into a struct cmd. Legacy commands: the header's
// in_words counts the whole write in 4-byte words, out_words the response
// (core and driver) in 4-byte words, and the core request starts with the
// response address. Extended commands: in_words and out_words count the
// core request and response in 8-byte words, the extended header has the
// driver's in 8-byte words and the response address.
static void parse(const void *buf, size_t n, size_t core_in, size_t core_out, struct cmd *c)
{
	const struct ib_uverbs_cmd_hdr *h = buf;
	const uint8_t *body = (const uint8_t *)buf + sizeof(*h);
	size_t out;

	c->op = h->command & IB_USER_VERBS_CMD_COMMAND_MASK;
	c->ex = !!(h->command & IB_USER_VERBS_CMD_FLAG_EXTENDED);
	if (c->ex) {
		const struct ib_uverbs_ex_cmd_hdr *ex = (const void *)body;

		body += sizeof(*ex);
		c->core = body;
		c->core_in = (size_t)h->in_words * 8;
		c->drv = body + c->core_in;
		c->drv_in = (size_t)ex->provider_in_words * 8;
		c->resp = (uint8_t *)(uintptr_t)ex->response;
		c->core_out = (size_t)h->out_words * 8;
		c->drv_out = c->resp + c->core_out;
		c->drv_out_len = (size_t)ex->provider_out_words * 8;
		memset(c->resp, 0, c->core_out + c->drv_out_len);
		return;
	}
	if ((size_t)h->in_words * 4 != n || n < sizeof(*h) + core_in)
		die("%s: write of %zu bytes, in_words %u", cmd_name(c->op), n, h->in_words);
	c->core = body;
	c->core_in = core_in;
	c->drv = body + core_in;
	c->drv_in = n - sizeof(*h) - core_in;
	out = (size_t)h->out_words * 4;
	c->resp = out ? (uint8_t *)(uintptr_t)*(const uint64_t *)body : NULL;
	if (out && out < core_out)
		die("%s: response of %zu bytes", cmd_name(c->op), out);
	c->core_out = core_out;
	c->drv_out = c->resp ? c->resp + core_out : NULL;
	c->drv_out_len = out > core_out ? out - core_out : 0;
	if (c->resp)
		memset(c->resp, 0, out);
}

static void drv_resp(struct cmd *c, const void *d, size_t len)
{
	if (len > c->drv_out_len)
		len = c->drv_out_len;
	memcpy(c->drv_out, d, len);
}

static void get_context(struct cmd *c)
{
	struct ib_uverbs_get_context_resp r = { .async_fd = async_fd, .num_comp_vectors = 1 };
	struct mlx5_ib_alloc_ucontext_resp d = {
		.qp_tab_size = QP_TAB_SIZE,
		.bf_reg_size = BF_REG_SIZE,
		.tot_bfregs = dyn ? 0 : TOT_BFREGS,
		.cache_line_size = CACHE_LINE,
		.max_sq_desc_sz = MAX_SQ_DESC,
		.max_rq_desc_sz = MAX_RQ_DESC,
		.max_send_wqebb = MAX_SEND_WQEBB,
		.max_recv_wr = MAX_RECV_WR,
		.max_srq_recv_wr = MAX_SRQ_RECV_WR,
		.num_ports = 1,
		.response_length = sizeof(d),
		.cqe_version = CQE_VERSION,
		.cmds_supp_uhw = CMDS_SUPP_UHW,
		.log_uar_size = LOG_UAR_SIZE,
		.num_uars_per_page = UARS_PER_PAGE,
	};

	memcpy(c->resp, &r, sizeof(r));
	drv_resp(c, &d, sizeof(d));
	record_cmd("context", c->drv, c->drv_in, NULL, 0);
}

static void query_device(struct cmd *c)
{
	struct ib_uverbs_query_device_resp *r = (void *)c->resp;

	r->fw_ver = (uint64_t)16 << 32 | (uint64_t)35 << 16 | 1000;
	r->node_guid = htobe64(0x0002c90300a1b2c3);
	r->sys_image_guid = r->node_guid;
	r->max_mr_size = ~0ull;
	r->page_size_cap = 0xfffff000;
	r->vendor_id = 0x02c9;
	r->vendor_part_id = 4119;
	r->max_qp = QP_TAB_SIZE;
	r->max_qp_wr = MAX_RECV_WR;
	r->device_cap_flags = 0;
	r->max_sge = 30;
	r->max_cq = 1 << 24;
	r->max_cqe = (1 << 22) - 1;
	r->max_mr = 1 << 24;
	r->max_pd = 1 << 24;
	r->max_qp_rd_atom = 16;
	r->max_qp_init_rd_atom = 16;
	r->atomic_cap = IBV_ATOMIC_HCA;
	r->max_srq = 1 << 23;
	r->max_srq_wr = MAX_SRQ_RECV_WR;
	r->max_srq_sge = 31;
	r->max_pkeys = 128;
	r->local_ca_ack_delay = 16;
	r->phys_port_cnt = 1;
	if (c->ex && c->core_out >= sizeof(struct ib_uverbs_ex_query_device_resp))
		((struct ib_uverbs_ex_query_device_resp *)c->resp)->response_length = c->core_out;
	if (c->drv_out_len >= 8)
		((struct mlx5_ib_query_device_resp *)c->drv_out)->response_length = c->drv_out_len;
}

static void query_port(struct cmd *c)
{
	struct ib_uverbs_query_port_resp r = {
		.port_cap_flags = 0x2651e848,
		.max_msg_sz = 1 << 30,
		.gid_tbl_len = 128,
		.pkey_tbl_len = 128,
		.lid = 7,
		.sm_lid = 1,
		.state = IBV_PORT_ACTIVE,
		.max_mtu = IBV_MTU_4096,
		.active_mtu = IBV_MTU_4096,
		.max_vl_num = 4,
		.subnet_timeout = 18,
		.active_width = 2,
		.active_speed = 32,
		.phys_state = 5,
		.link_layer = IBV_LINK_LAYER_INFINIBAND,
	};

	memcpy(c->resp, &r, sizeof(r));
}

static void create_cq(struct cmd *c)
{
	const struct ib_uverbs_create_cq *q = (const void *)c->core;
	const struct mlx5_ib_create_cq *d = (const void *)c->drv;
	struct ib_uverbs_create_cq_resp r = { .cq_handle = 2, .cqe = q->cqe };
	struct mlx5_ib_create_cq_resp dr = { .cqn = CQN };
	static const size_t addrs[] = { 0, 8 };

	if (c->drv_in < 16)
		die("CREATE_CQ: driver request of %zu bytes", c->drv_in);
	cq.buf = (uint8_t *)(uintptr_t)d->buf_addr;
	cq.db = (uint32_t *)(uintptr_t)d->db_addr;
	cq.n = q->cqe + 1;
	if (cq.n & (cq.n - 1))
		die("CREATE_CQ: %u entries", cq.n);
	memcpy(c->resp, &r, sizeof(r));
	drv_resp(c, &dr, sizeof(dr));
	fprintf(setup_f, "cap cq %u\n", q->cqe);
	record_cmd("cq", c->drv, c->drv_in, addrs, 2);
}

static void create_srq(struct cmd *c)
{
	const struct ib_uverbs_create_srq *q = (const void *)c->core;
	const struct mlx5_ib_create_srq *d = (const void *)c->drv;
	struct ib_uverbs_create_srq_resp r = { .srq_handle = 3, .max_wr = q->max_wr, .max_sge = q->max_sge, .srqn = SRQN };
	struct mlx5_ib_create_srq_resp dr = { .srqn = SRQN };
	static const size_t addrs[] = { 0, 8 };
	uint32_t desc;

	if (c->drv_in < 16)
		die("CREATE_SRQ: driver request of %zu bytes", c->drv_in);
	srq.buf = (uint8_t *)(uintptr_t)d->buf_addr;
	srq.db = (uint32_t *)(uintptr_t)d->db_addr;
	// The kernel sizes the SRQ from the generic request: a power of two
	// of max_wr + 1 WQEs of a next segment and max_sge data segments,
	// at least 32 bytes, rounded up to a power of two.
	srq.n = pow2(q->max_wr + 1);
	desc = 16 + 16 * q->max_sge;
	srq.stride = pow2(desc < 32 ? 32 : desc);
	memcpy(c->resp, &r, sizeof(r));
	drv_resp(c, &dr, sizeof(dr));
	fprintf(setup_f, "cap srq %u %u\n", q->max_wr, q->max_sge);
	record_cmd("srq", c->drv, c->drv_in, addrs, 2);
}

static void create_qp(struct cmd *c)
{
	const struct ib_uverbs_create_qp *q = (const void *)c->core;
	const struct mlx5_ib_create_qp *d = (const void *)c->drv;
	struct ib_uverbs_create_qp_resp r = {
		.qp_handle = 7, .qpn = QPN,
		.max_send_wr = q->max_send_wr, .max_recv_wr = q->max_recv_wr,
		.max_send_sge = q->max_send_sge, .max_recv_sge = q->max_recv_sge,
		.max_inline_data = q->max_inline_data,
	};
	// With dynamic UARs CREATE_QP names the library's page and the
	// kernel answers MLX5_IB_INVALID_BFREG (bit 31; mlx5_ib.h), which
	// the library must not use.
	struct mlx5_ib_create_qp_resp dr = { .bfreg_index = dyn ? 1u << 31 : QP_BFREG };
	static const size_t addrs[] = { 0, 8, 40 };

	if (c->ex)
		die("CREATE_QP: extended command");
	if (c->drv_in < 36)
		die("CREATE_QP: driver request of %zu bytes", c->drv_in);
	qp.buf = (uint8_t *)(uintptr_t)d->buf_addr;
	qp.db = (uint32_t *)(uintptr_t)d->db_addr;
	qp.sq_bbs = d->sq_wqe_count;
	qp.rq_n = d->rq_wqe_count;
	qp.rq_stride = d->rq_wqe_count ? 1u << d->rq_wqe_shift : 0;
	qp.sq = qp.buf + (size_t)qp.rq_n * qp.rq_stride;
	qp.exists = 1;
	memcpy(c->resp, &r, sizeof(r));
	drv_resp(c, &dr, sizeof(dr));
	fprintf(setup_f, "cap qp %u %u %u %u %u\n", q->max_send_wr, q->max_recv_wr,
		q->max_send_sge, q->max_recv_sge, q->max_inline_data);
	record_cmd("qp", c->drv, c->drv_in, addrs, 3);
}

// attr finds attribute id of an ioctl, or dies: libmlx5 sends each
// attribute the method takes.
static struct ib_uverbs_attr *attr(struct ib_uverbs_ioctl_hdr *h, uint16_t id)
{
	for (int i = 0; i < h->num_attrs; i++)
		if (h->attrs[i].attr_id == id)
			return &h->attrs[i];
	die("UAR ioctl without attribute %#x", id);
}

// put_out writes v to an output attribute: the pointer it carries, as
// many bytes as it says (little-endian, the host's order).
static void put_out(struct ib_uverbs_attr *a, uint64_t v)
{
	if (a->len > 8)
		die("UAR ioctl: output attribute %#x of %u bytes", a->attr_id, a->len);
	memcpy((void *)(uintptr_t)a->data, &v, a->len);
	a->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
}

// uar_ioctl is the fake kernel's ioctl in the mlx5dyn setups: it answers
// the UAR object's alloc and destroy methods, as the mlx5 driver does,
// and fails everything else with ENOTTY, so that libibverbs keeps
// writing its commands (an ioctl of the generic objects would otherwise
// go through the ioctl path, which this fake kernel does not answer).
// libmlx5 runs the UAR methods with execute_ioctl, which has no write
// fallback.
static int uar_ioctl(unsigned long req, void *arg)
{
	struct ib_uverbs_ioctl_hdr *h = arg;

	if (req != RDMA_VERBS_IOCTL || h->object_id != MLX5_IB_OBJECT_UAR) {
		trace("ioctl %#lx refused", req);
		errno = ENOTTY;
		return -1;
	}
	if (h->length != sizeof(*h) + h->num_attrs * sizeof(h->attrs[0]))
		die("UAR ioctl: length %u for %u attributes", h->length, h->num_attrs);
	switch (h->method_id) {
	case MLX5_IB_METHOD_UAR_OBJ_ALLOC: {
		uint64_t type = attr(h, MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE)->data;
		uint64_t off = ((uint64_t)(ndyn >> 8) << 16 | DYN_MMAP_CMD << 8 | (ndyn & 0xff)) * PAGE;
		uint32_t page_id = DYN_PAGE_ID + ndyn;

		if (type != MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF && type != MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC)
			die("UAR ioctl: alloc type %llu", (unsigned long long)type);
		attr(h, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE)->data = DYN_HANDLE + ndyn;
		put_out(attr(h, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET), off);
		put_out(attr(h, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH), PAGE);
		put_out(attr(h, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID), page_id);
		fprintf(setup_f, "uaralloc %llu -> 0x%llx %u %u\n", (unsigned long long)type,
			(unsigned long long)off, PAGE, page_id);
		ndyn++;
		return 0;
	}
	case MLX5_IB_METHOD_UAR_OBJ_DESTROY:
		fprintf(setup_f, "uarfree 0x%llx\n",
			(unsigned long long)attr(h, MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE)->data);
		return 0;
	}
	die("UAR ioctl: method %#x", h->method_id);
}

// kernel_write answers the commands libibverbs and libmlx5 send.
ssize_t kernel_write(const void *buf, size_t n)
{
	const struct ib_uverbs_cmd_hdr *h = buf;
	uint32_t op = h->command & IB_USER_VERBS_CMD_COMMAND_MASK;
	int ex = !!(h->command & IB_USER_VERBS_CMD_FLAG_EXTENDED);
	size_t core_in = 0, core_out = 0;
	struct cmd c;

	switch (op) {
	case IB_USER_VERBS_CMD_GET_CONTEXT:
		core_in = sizeof(struct ib_uverbs_get_context);
		core_out = sizeof(struct ib_uverbs_get_context_resp);
		break;
	case IB_USER_VERBS_CMD_QUERY_DEVICE:
		core_in = sizeof(struct ib_uverbs_query_device);
		core_out = sizeof(struct ib_uverbs_query_device_resp);
		break;
	case IB_USER_VERBS_CMD_QUERY_PORT:
		core_in = sizeof(struct ib_uverbs_query_port);
		core_out = sizeof(struct ib_uverbs_query_port_resp);
		break;
	case IB_USER_VERBS_CMD_ALLOC_PD:
		core_in = sizeof(struct ib_uverbs_alloc_pd);
		core_out = sizeof(struct ib_uverbs_alloc_pd_resp);
		break;
	case IB_USER_VERBS_CMD_CREATE_CQ:
		core_in = sizeof(struct ib_uverbs_create_cq);
		core_out = sizeof(struct ib_uverbs_create_cq_resp);
		break;
	case IB_USER_VERBS_CMD_CREATE_SRQ:
		core_in = sizeof(struct ib_uverbs_create_srq);
		core_out = sizeof(struct ib_uverbs_create_srq_resp);
		break;
	case IB_USER_VERBS_CMD_CREATE_QP:
		core_in = sizeof(struct ib_uverbs_create_qp);
		core_out = sizeof(struct ib_uverbs_create_qp_resp);
		break;
	case IB_USER_VERBS_CMD_MODIFY_QP:
		core_in = sizeof(struct ib_uverbs_modify_qp);
		break;
	case IB_USER_VERBS_CMD_CREATE_AH:
		core_in = sizeof(struct ib_uverbs_create_ah);
		core_out = sizeof(struct ib_uverbs_create_ah_resp);
		break;
	case IB_USER_VERBS_CMD_DEALLOC_PD:
	case IB_USER_VERBS_CMD_DESTROY_AH:
		core_in = 4;
		break;
	case IB_USER_VERBS_CMD_DESTROY_CQ:
		core_in = sizeof(struct ib_uverbs_destroy_cq);
		core_out = sizeof(struct ib_uverbs_destroy_cq_resp);
		break;
	case IB_USER_VERBS_CMD_DESTROY_QP:
		core_in = sizeof(struct ib_uverbs_destroy_qp);
		core_out = sizeof(struct ib_uverbs_destroy_qp_resp);
		break;
	case IB_USER_VERBS_CMD_DESTROY_SRQ:
		core_in = sizeof(struct ib_uverbs_destroy_srq);
		core_out = sizeof(struct ib_uverbs_destroy_srq_resp);
		break;
	default:
		trace("%scommand %u refused", ex ? "extended " : "", op);
		errno = EOPNOTSUPP;
		return -1;
	}
	parse(buf, n, core_in, core_out, &c);
	trace("%s%s: %zu bytes of driver request, %zu of driver response", ex ? "extended " : "",
	      cmd_name(op), c.drv_in, c.drv_out_len);

	switch (op) {
	case IB_USER_VERBS_CMD_GET_CONTEXT:
		// A kernel refuses DEVX to a process without CAP_NET_RAW
		// (mlx5_ib_alloc_ucontext: -EPERM); libmlx5 asks for it first
		// and retries without.
		if (c.drv_in >= 12 && (((const uint32_t *)c.drv)[2] & MLX5_IB_ALLOC_UCTX_DEVX)) {
			trace("GET_CONTEXT with DEVX refused");
			errno = EPERM;
			return -1;
		}
		get_context(&c);
		break;
	case IB_USER_VERBS_CMD_QUERY_DEVICE:
		query_device(&c);
		break;
	case IB_USER_VERBS_CMD_QUERY_PORT:
		query_port(&c);
		break;
	case IB_USER_VERBS_CMD_ALLOC_PD: {
		struct ib_uverbs_alloc_pd_resp r = { .pd_handle = 1 };
		struct mlx5_ib_alloc_pd_resp d = { .pdn = PDN };

		memcpy(c.resp, &r, sizeof(r));
		drv_resp(&c, &d, sizeof(d));
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_CQ:
		if (ex)
			die("CREATE_CQ: extended command");
		create_cq(&c);
		break;
	case IB_USER_VERBS_CMD_CREATE_SRQ:
		create_srq(&c);
		break;
	case IB_USER_VERBS_CMD_CREATE_QP:
		create_qp(&c);
		break;
	case IB_USER_VERBS_CMD_CREATE_AH:
		die("CREATE_AH on an InfiniBand port");
		break;
	default:
		break; // modify and destroys: nothing to answer
	}
	return n;
}

// ---- the script --------------------------------------------------------

static int ud;

static int unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	die("bad hex digit %c", c);
	return 0;
}

// cqe is the device writing a completion into its next CQ entry: the 63
// bytes first, then op_own with the owner bit of this pass over the
// ring, as hardware does.
static void cqe(char **save)
{
	char *t = strtok_r(NULL, " \t\n", save);
	uint8_t b[64];
	uint8_t *e;

	if (!t || strlen(t) != 128)
		die("cqe wants 128 hex digits");
	for (int i = 0; i < 64; i++)
		b[i] = unhex(t[2 * i]) << 4 | unhex(t[2 * i + 1]);
	e = cq.buf + (size_t)(cq.put & (cq.n - 1)) * 64;
	memcpy(e, b, 63);
	__atomic_store_n(&e[63], (uint8_t)((b[63] & ~1) | ((cq.put / cq.n) & 1)), __ATOMIC_RELEASE);
	cq.put++;
}

// The work completion flags of the kernel's struct ib_uverbs_wc (enum
// ib_wc_flags of include/rdma/ib_verbs.h, not in the uapi headers).
enum {
	IB_WC_GRH_ = 1 << 0,
	IB_WC_WITH_IMM_ = 1 << 1,
	IB_WC_WITH_INVALIDATE_ = 1 << 2,
	IB_WC_IP_CSUM_OK_ = 1 << 3,
};

// wc_flags gives a completion's flags as the kernel's struct ib_uverbs_wc
// numbers them, which provider.WC keeps: libibverbs swaps the bits of
// IBV_WC_IP_CSUM_OK and IBV_WC_WITH_INV.
static uint32_t wc_flags(const struct ibv_wc *wc)
{
	uint32_t flags = 0;

	if (wc->wc_flags & IBV_WC_GRH)
		flags |= IB_WC_GRH_;
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		flags |= IB_WC_WITH_IMM_;
	if (wc->wc_flags & IBV_WC_WITH_INV)
		flags |= IB_WC_WITH_INVALIDATE_;
	if (wc->wc_flags & IBV_WC_IP_CSUM_OK)
		flags |= IB_WC_IP_CSUM_OK_;
	if (wc->wc_flags & ~(IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK))
		die("wc_flags %#x", wc->wc_flags);
	return flags;
}

static void slot(const char *q, uint32_t i, const uint8_t *p, size_t n)
{
	printf("slot %s %u ", q, i);
	hex(stdout, p, n);
	printf("\n");
}

static void dump(const char *q)
{
	if (!strcmp(q, "sq")) {
		for (uint32_t i = 0; i < qp.sq_bbs; i++)
			slot(q, i, qp.sq + (size_t)i * 64, 64);
	} else if (!strcmp(q, "rq")) {
		for (uint32_t i = 0; i < qp.rq_n; i++)
			slot(q, i, qp.buf + (size_t)i * qp.rq_stride, qp.rq_stride);
	} else if (!strcmp(q, "srq")) {
		if (!srq.buf)
			die("dump srq without an SRQ");
		for (uint32_t i = 0; i < srq.n; i++)
			slot(q, i, srq.buf + (size_t)i * srq.stride, srq.stride);
	} else if (!strcmp(q, "cq")) {
		for (uint32_t i = 0; i < cq.n; i++)
			slot(q, i, cq.buf + (size_t)i * 64, 64);
	} else {
		die("no queue %s", q);
	}
}

// device_view prints the doorbell records as the device reads them
// (big-endian words) and every non-zero 8-byte word of the UAR pages
// (at the page's mmap offset plus the word's offset in the page), which
// it then clears: the next operation's stores stand alone.
static void device_view(void)
{
	if (qp.exists) {
		printf("dbr qp.rq 0x%x\n", be32toh(__atomic_load_n(&qp.db[0], __ATOMIC_ACQUIRE)));
		printf("dbr qp.sq 0x%x\n", be32toh(__atomic_load_n(&qp.db[1], __ATOMIC_ACQUIRE)));
	}
	if (srq.db)
		printf("dbr srq 0x%x\n", be32toh(__atomic_load_n(&srq.db[0], __ATOMIC_ACQUIRE)));
	printf("dbr cq.ci 0x%x\n", be32toh(__atomic_load_n(&cq.db[0], __ATOMIC_ACQUIRE)));
	printf("dbr cq.arm 0x%x\n", be32toh(__atomic_load_n(&cq.db[1], __ATOMIC_ACQUIRE)));
	for (int i = 0; i < nuars; i++) {
		for (size_t off = 0; off < uars[i].len; off += 8) {
			uint64_t w;

			memcpy(&w, uars[i].page + off, 8);
			if (!w)
				continue;
			printf("uar 0x%llx ", (unsigned long long)(uars[i].off + off));
			hex(stdout, uars[i].page + off, 8);
			printf("\n");
		}
		memset(uars[i].page, 0, uars[i].len);
	}
}

static int by_offset(const void *a, const void *b)
{
	const struct uar_map *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static void setup(char **save)
{
	static const struct fake_device dev = { "mlx5_0", RDMA_DRIVER_MLX5, IBV_NODE_CA, MLX5_IB_UVERBS_ABI_VERSION };
	struct fake_sizes sz;

	read_sizes(save, &sz);

	struct ibv_srq_attr sa = { .max_wr = sz.srq, .max_sge = sz.srq_max_sge };
	struct fake_setup fs = {
		.dev = &dev,
		.cqe = sz.cq,
		.ah = ud ? &ud_ah : NULL,
		.srq = sz.srq ? &sa : NULL,
		.shared = !sz.rq,
		.cap = { .max_send_wr = sz.sq, .max_recv_wr = sz.rq,
			 .max_send_sge = sz.max_send_sge, .max_recv_sge = sz.max_recv_sge,
			 .max_inline_data = sz.max_inline },
		.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC,
		// libmlx5 takes receives from INIT and sends from RTS on.
		.state = IBV_QPS_RTS,
	};

	setup_f = open_memstream(&setup_out, &setup_len);
	if (!setup_f)
		die("open_memstream: %s", strerror(errno));
	fake_create(&fs);
	// The pages mapped, in order of offset (which ones, not when), the
	// order device_view reads them in.
	qsort(uars, nuars, sizeof(uars[0]), by_offset);
	for (int i = 0; i < nuars; i++)
		fprintf(setup_f, "mmap 0x%llx %zu\n", (unsigned long long)uars[i].off, uars[i].len);
	fclose(setup_f);
	setup_f = stderr;
	printf("ready\n%s", setup_out);
	free(setup_out);
	device_view();
}

// ---- host cost (the bench command) ---------------------------------------
//
// bench ROW ITERS times ITERS operations of one row of the host cost table
// (docs/benchmarks-host.md) through libmlx5 and prints "bench ROW ns/op";
// the Go side is uverbs/hostcostmlx5_test.go and
// cq/hostcostmlx5_test.go over internal/provider/conformance's MLX5Host. The
// fake device's work is done with the clock stopped, the same on both
// sides: every 1024 posts the QP goes RESET, INIT, RTR, RTS (libmlx5
// starts its queues over; nothing retires WQEs otherwise, a completion
// does), and when the CQ holds fewer completions than a poll asks for,
// the device writes receive-with-immediate CQEs for the whole ring
// (after posting receives with wr_id 9 until the RQ is full, which those
// CQEs hand back).

enum { BENCH_CHUNK = 1024 };

static double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void bench_restart(void)
{
	static const enum ibv_qp_state states[] = { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		struct ibv_qp_attr ma = { .qp_state = states[i] };

		if (ibv_modify_qp(verbs.qp, &ma, IBV_QP_STATE))
			die("bench: ibv_modify_qp: %s", strerror(errno));
	}
}

// bench_fill has the device write n receive-with-immediate CQEs (4096
// bytes, immediate 0x01020304, the QP's user index 0), op_own last.
static void bench_fill(uint32_t n)
{
	uint8_t b[64] = { 0 };

	b[36] = 1, b[37] = 2, b[38] = 3, b[39] = 4; // imm_inval_pkey
	b[46] = 0x10; // byte_cnt 4096
	b[57] = QPN >> 16, b[58] = QPN >> 8 & 0xff, b[59] = QPN & 0xff;
	b[63] = 3 << 4; // MLX5_CQE_RESP_SEND_IMM
	for (uint32_t k = 0; k < n; k++) {
		uint8_t *e = cq.buf + (size_t)(cq.put & (cq.n - 1)) * 64;

		memcpy(e, b, 63);
		__atomic_store_n(&e[63], (uint8_t)(b[63] | ((cq.put / cq.n) & 1)), __ATOMIC_RELEASE);
		cq.put++;
	}
}

static void bench(const char *row, long iters)
{
	static struct ibv_send_wr w[16];
	static struct ibv_sge sg = { .addr = 0x10000, .length = 4096, .lkey = 0x55 };
	struct ibv_send_wr *bad;
	struct ibv_recv_wr rw = { .wr_id = 9, .sg_list = &sg, .num_sge = 1 }, *rbad;
	struct ibv_wc wc[16];
	double t = 0, t0;
	long i, posts = 0;

	for (int k = 0; k < 16; k++) {
		w[k] = (struct ibv_send_wr){ .wr_id = k, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.sg_list = &sg, .num_sge = 1, .wr.rdma = { .remote_addr = 0xdead0000, .rkey = 0x77 },
			.next = k < 15 ? &w[k + 1] : NULL };
	}
	bench_restart();
	if (!strcmp(row, "send1") || !strcmp(row, "send16")) {
		int k = row[4] == '1' && row[5] == '6' ? 16 : 1;
		struct ibv_send_wr *first = &w[16 - k];

		t0 = bench_now();
		for (i = 0; i < iters; i++) {
			first->wr_id = i;
			if (ibv_post_send(verbs.qp, first, &bad))
				die("bench: post send");
			posts += k;
			if (posts % BENCH_CHUNK == 0) {
				t += bench_now() - t0;
				bench_restart();
				t0 = bench_now();
			}
		}
		t += bench_now() - t0;
	} else if (!strcmp(row, "recv1")) {
		t0 = bench_now();
		for (i = 0; i < iters; i++) {
			rw.wr_id = i;
			if (ibv_post_recv(verbs.qp, &rw, &rbad))
				die("bench: post recv");
			if (i % BENCH_CHUNK == BENCH_CHUNK - 1) {
				t += bench_now() - t0;
				bench_restart();
				t0 = bench_now();
			}
		}
		t += bench_now() - t0;
	} else if (!strcmp(row, "arm")) {
		t0 = bench_now();
		for (i = 0; i < iters; i++)
			if (ibv_req_notify_cq(verbs.cq, 0))
				die("bench: arm");
		t += bench_now() - t0;
	} else if (!strcmp(row, "pollempty") || !strcmp(row, "poll1") || !strcmp(row, "poll16")) {
		int k = !strcmp(row, "poll16") ? 16 : !strcmp(row, "poll1");
		uint32_t avail = 0;

		while (!ibv_post_recv(verbs.qp, &rw, &rbad))
			;
		t0 = bench_now();
		for (i = 0; i < iters; i++) {
			if (avail < (uint32_t)k) {
				t += bench_now() - t0;
				bench_fill(cq.n - avail);
				avail = cq.n;
				t0 = bench_now();
			}
			if (ibv_poll_cq(verbs.cq, k ? k : 1, wc) != k)
				die("bench: poll of %d", k);
			avail -= k;
		}
		t += bench_now() - t0;
		if (k && (wc[0].wr_id != 9 || ntohl(wc[0].imm_data) != 0x01020304 || wc[0].byte_len != 4096))
			die("bench: poll: wrong completion");
		while (ibv_poll_cq(verbs.cq, 16, wc) > 0)
			;
	} else {
		die("bench: no row %s", row);
	}
	printf("bench %s %.3f\n", row, t / iters);
}

// count ROW OPS runs OPS operations of one row, for callgrind
// (internal/provider/conformance, HostCost): the operations run in the
// hostloop_ functions only, which valgrind --toggle-collect counts; the
// restarts and fills run between their calls, uncounted, in the chunks
// of bench (BENCH_CHUNK requests, a full CQ's worth of polls). The Go
// side's loops are hostLoop* in uverbs/hostcostmlx5_test.go and
// cq/hostcostmlx5_test.go. The loops but hostloop_arm are in fake.c.


HOSTLOOP static int hostloop_arm(long calls)
{
	for (long i = 0; i < calls; i++)
		if (ibv_req_notify_cq(verbs.cq, 0))
			return -1;
	return 0;
}

static void count(const char *row, long ops)
{
	static struct ibv_send_wr w[16];
	static struct ibv_sge sg = { .addr = 0x10000, .length = 4096, .lkey = 0x55 };
	struct ibv_recv_wr rw = { .wr_id = 9, .sg_list = &sg, .num_sge = 1 }, *rbad;
	struct ibv_wc wc[16];
	int send = !strcmp(row, "send1") || !strcmp(row, "send16");
	int poll = !strcmp(row, "pollempty") || !strcmp(row, "poll1") || !strcmp(row, "poll16");
	int k = !strcmp(row, "send16") || !strcmp(row, "poll16") ? 16 : strcmp(row, "pollempty") != 0;
	uint32_t avail = 0;
	long chunk;

	for (int j = 0; j < 16; j++) {
		w[j] = (struct ibv_send_wr){ .wr_id = j, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.sg_list = &sg, .num_sge = 1, .wr.rdma = { .remote_addr = 0xdead0000, .rkey = 0x77 },
			.next = j < 15 ? &w[j + 1] : NULL };
	}
	bench_restart();
	if (send)
		chunk = BENCH_CHUNK / k;
	else if (!strcmp(row, "recv1"))
		chunk = BENCH_CHUNK;
	else if (!strcmp(row, "arm") || !strcmp(row, "pollempty"))
		chunk = ops;
	else if (poll)
		chunk = cq.n / k;
	else
		die("count: no row %s", row);
	if (poll)
		while (!ibv_post_recv(verbs.qp, &rw, &rbad))
			;
	for (long done = 0; done < ops; done += chunk) {
		long c = ops - done < chunk ? ops - done : chunk;
		int err;

		if (poll && k) {
			bench_fill(cq.n - avail);
			avail = cq.n;
		}
		if (send)
			err = hostloop_send(&w[16 - k], c);
		else if (!strcmp(row, "recv1"))
			err = hostloop_recv(&rw, c);
		else if (!strcmp(row, "arm"))
			err = hostloop_arm(c);
		else
			err = hostloop_poll(wc, k ? k : 1, k, c);
		if (err)
			die("count %s: an operation failed", row);
		avail -= c * k;
		if (send || !strcmp(row, "recv1"))
			bench_restart();
	}
	if (poll)
		while (ibv_poll_cq(verbs.cq, 16, wc) > 0)
			;
	printf("count %s %ld\n", row, ops);
}
// ---- end of host cost ----------------------------------------------------

int main(int argc, char **argv)
{
	char *save, *t;
	int ops = 0;

	if (argc > 1 && !strcmp(argv[1], "-v"))
		verbose = 1;
	// A clean environment: libmlx5 reads many MLX5_* variables. Stalling
	// in poll is switched off, so that libmlx5 does not read
	// /proc/cpuinfo to decide it (it changes timing only).
	clearenv();
	setenv("MLX5_STALL_CQ_POLL", "0", 1);
	fake_init();
	setup_f = stderr;

	while ((t = next_command(&save))) {
		if (!strcmp(t, "mlx5") || !strcmp(t, "mlx5-ud") || !strcmp(t, "mlx5dyn") || !strcmp(t, "mlx5dyn-ud")) {
			ud = !!strstr(t, "-ud");
			dyn = !strncmp(t, "mlx5dyn", 7);
			kernel_ioctl = dyn ? uar_ioctl : NULL;
			setup(&save);
			continue;
		}
		if (!verbs.ctx)
			die("%s before the setup line", t);
		if (!strcmp(t, "send")) {
			int n = num(&save);
			int got = post_send(n, ud ? UD_ALL : UD_NONE);

			printf("op %d send %d %d\n", ops++, n, got);
		} else if (!strcmp(t, "recv") || !strcmp(t, "srecv")) {
			int shared = t[0] == 's';
			int n = num(&save);
			int got = post_recv(n, shared);

			printf("op %d %s %d %d\n", ops++, shared ? "srecv" : "recv", n, got);
		} else if (!strcmp(t, "cqe")) {
			cqe(&save);
		} else if (!strcmp(t, "modify")) {
			struct ibv_qp_attr ma = { .qp_state = num(&save) };

			if (ibv_modify_qp(verbs.qp, &ma, IBV_QP_STATE))
				die("ibv_modify_qp: %s", strerror(errno));
		} else if (!strcmp(t, "arm")) {
			if (ibv_req_notify_cq(verbs.cq, num(&save)))
				die("ibv_req_notify_cq: %s", strerror(errno));
		} else if (!strcmp(t, "poll")) {
			poll_cq(num(&save), wc_flags);
		} else if (!strcmp(t, "bench")) { // host cost
			char *row = strtok_r(NULL, " \t\n", &save);

			if (!row)
				die("bench what?");
			bench(row, num(&save));
		} else if (!strcmp(t, "count")) { // instructions per operation
			char *row = word(&save, "count");

			count(row, num(&save));
		} else if (!strcmp(t, "dump")) {
			dump(word(&save, "dump"));
		} else {
			die("unknown command %s", t);
		}
		device_view();
	}
	fflush(stdout);
	return 0;
}
