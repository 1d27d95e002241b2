// fake.c: the plumbing both conformance harnesses share; see fake.h for
// what it offers and harness.c's opening comment for how the fake kernel
// sits under libibverbs.

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
#include <rdma/ib_user_verbs.h>

#include "fake.h"

int fake_fd = -1, async_fd = -1;
int verbose;

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", harness_name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

void trace(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", harness_name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

// ---- the wrapped calls -------------------------------------------------

ssize_t __real_write(int fd, const void *buf, size_t n);
int __real_ioctl(int fd, unsigned long req, void *arg);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_munmap(void *addr, size_t len);
int __real_open(const char *path, int flags, mode_t mode);

int __wrap_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if (strncmp(path, "/dev/infiniband/", 16) == 0) {
		fake_fd = __real_open("/dev/null", O_RDWR | O_CLOEXEC, 0);
		return fake_fd;
	}
	return __real_open(path, flags, mode);
}

int (*kernel_ioctl)(unsigned long req, void *arg);

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd == fake_fd && fd >= 0) {
		if (kernel_ioctl)
			return kernel_ioctl(req, arg);
		trace("ioctl %#lx refused", req);
		errno = ENOTTY; // no ioctl framework: libibverbs falls back to write
		return -1;
	}
	return __real_ioctl(fd, req, arg);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	if (fd == fake_fd && fd >= 0)
		return kernel_write(buf, n);
	return __real_write(fd, buf, n);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fd != fake_fd || fd < 0)
		return __real_mmap(addr, len, prot, flags, fd, off);
	return kernel_mmap(len, off);
}

int __wrap_munmap(void *addr, size_t len)
{
	if (kernel_owns(addr))
		return 0;
	return __real_munmap(addr, len);
}

// ---- device discovery --------------------------------------------------

// The device fake_create is opening, which discovery reports.
static const struct fake_device *device;

// struct verbs_sysfs_dev of rdma-core v44 (libibverbs/driver.h), which is
// not installed: the fields up to the ones this file sets, in order.
struct list_node_ { struct list_node_ *next, *prev; };
struct sysfs_dev_ {
	struct list_node_ entry;
	void *provider_data;
	const void *match;
	unsigned int flags;
	char sysfs_name[64];
	dev_t sysfs_cdev;
	char ibdev_name[64];
	char ibdev_path[256];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

int __wrap_rdmacore44_0_find_sysfs_devs_nl(struct list_node_ *head)
{
	struct sysfs_dev_ *d = calloc(1, sizeof(*d));

	if (!d)
		return ENOMEM;
	strcpy(d->sysfs_name, "uverbs0");
	snprintf(d->ibdev_name, sizeof(d->ibdev_name), "%s", device->name);
	snprintf(d->ibdev_path, sizeof(d->ibdev_path), "%s/class/infiniband/%s",
		 getenv("SYSFS_PATH"), d->ibdev_name);
	d->driver_id = device->driver_id;
	d->node_type = device->node_type;
	d->num_ports = 1;
	d->abi_ver = device->abi_ver;
	// list_add: at the head of the list.
	d->entry.next = head->next;
	d->entry.prev = head;
	head->next->prev = &d->entry;
	head->next = &d->entry;
	return 0;
}

// sysfs_dir is the fake sysfs root, removed once the device list is read.
static char sysfs_dir[] = "/tmp/purerdma-conformance-XXXXXX";

static void sysfs_path(char *path, size_t n, const char *rel)
{
	snprintf(path, n, "%s/%s", sysfs_dir, rel);
}

static void fake_sysfs(void)
{
	char path[256];
	FILE *f;

	if (!mkdtemp(sysfs_dir))
		die("mkdtemp: %s", strerror(errno));
	sysfs_path(path, sizeof(path), "class");
	mkdir(path, 0700);
	sysfs_path(path, sizeof(path), "class/infiniband_verbs");
	mkdir(path, 0700);
	sysfs_path(path, sizeof(path), "class/infiniband_verbs/abi_version");
	f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "%d\n", IB_USER_VERBS_ABI_VERSION);
	fclose(f);
	setenv("SYSFS_PATH", sysfs_dir, 1);
}

// rm_fake_sysfs removes the fake sysfs: libibverbs reads it only while it
// lists the devices.
static void rm_fake_sysfs(void)
{
	char path[256];

	sysfs_path(path, sizeof(path), "class/infiniband_verbs/abi_version");
	unlink(path);
	sysfs_path(path, sizeof(path), "class/infiniband_verbs");
	rmdir(path);
	sysfs_path(path, sizeof(path), "class");
	rmdir(path);
	rmdir(sysfs_dir);
	unsetenv("SYSFS_PATH");
}

// ---- setup -------------------------------------------------------------

uint8_t pattern[4096];

void fake_init(void)
{
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 7 + 3);
	async_fd = __real_open("/dev/null", O_RDONLY | O_CLOEXEC, 0);
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
}

struct fake_verbs verbs;

void fake_create(const struct fake_setup *s)
{
	struct ibv_device **list;
	int n;

	device = s->dev;
	fake_sysfs();
	list = ibv_get_device_list(&n);
	rm_fake_sysfs();
	if (!list || n != 1)
		die("ibv_get_device_list: %d devices (%s)", n, strerror(errno));
	verbs.ctx = ibv_open_device(list[0]);
	if (!verbs.ctx)
		die("ibv_open_device: %s", strerror(errno));
	ibv_free_device_list(list);
	verbs.pd = ibv_alloc_pd(verbs.ctx);
	if (!verbs.pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	verbs.cq = ibv_create_cq(verbs.ctx, s->cqe, NULL, NULL, 0);
	if (!verbs.cq)
		die("ibv_create_cq: %s", strerror(errno));
	if (s->ah) {
		struct ibv_ah_attr aa = *s->ah;

		verbs.ah = ibv_create_ah(verbs.pd, &aa);
		if (!verbs.ah)
			die("ibv_create_ah: %s", strerror(errno));
	}
	if (s->srq) {
		struct ibv_srq_init_attr sa = { .attr = *s->srq };

		verbs.srq = ibv_create_srq(verbs.pd, &sa);
		if (!verbs.srq)
			die("ibv_create_srq: %s", strerror(errno));
	}
	struct ibv_qp_init_attr qa = {
		.send_cq = verbs.cq, .recv_cq = verbs.cq, .srq = s->shared ? verbs.srq : NULL,
		.cap = s->cap, .qp_type = s->qp_type,
	};
	verbs.qp = ibv_create_qp(verbs.pd, &qa);
	if (!verbs.qp)
		die("ibv_create_qp: %s", strerror(errno));
	for (enum ibv_qp_state st = IBV_QPS_INIT; st <= s->state; st++) {
		struct ibv_qp_attr ma = { .qp_state = st };

		if (ibv_modify_qp(verbs.qp, &ma, IBV_QP_STATE))
			die("ibv_modify_qp: %s", strerror(errno));
	}
}

// ---- the script --------------------------------------------------------

char line[1 << 16];

char *next_command(char **save)
{
	while (fgets(line, sizeof(line), stdin)) {
		char *t = strtok_r(line, " \t\n", save);

		if (t && t[0] != '#')
			return t;
	}
	return NULL;
}

char *word(char **save, const char *cmd)
{
	char *t = strtok_r(NULL, " \t\n", save);

	if (!t)
		die("%s what?", cmd);
	return t;
}

uint64_t num(char **save)
{
	char *t = strtok_r(NULL, " \t\n", save);

	if (!t)
		die("short line");
	return strtoull(t, NULL, 0);
}

void read_sizes(char **save, struct fake_sizes *z)
{
	z->sq = num(save);
	z->rq = num(save);
	z->srq = num(save);
	z->cq = num(save);
	z->max_send_sge = num(save);
	z->max_recv_sge = num(save);
	z->max_inline = num(save);
	z->srq_max_sge = num(save);
}

static void next_line(void)
{
	if (!fgets(line, sizeof(line), stdin))
		die("unexpected end of script");
}

#define MAXWR 4096
#define MAXSGE 64
static struct ibv_send_wr swr[MAXWR];
static struct ibv_recv_wr rwr[MAXWR];
static struct ibv_sge sges[MAXWR][MAXSGE];

static void read_sges(char **save, int i, int *nsge, int inl)
{
	*nsge = num(save);
	if (*nsge > MAXSGE)
		die("too many SGEs");
	for (int k = 0; k < *nsge; k++) {
		uint64_t a = num(save);

		if (inl)
			a = (uint64_t)(uintptr_t)(pattern + a);
		sges[i][k].addr = a;
		sges[i][k].length = num(save);
		sges[i][k].lkey = num(save);
	}
}

int post_send(int n, int ud)
{
	struct ibv_send_wr *bad = NULL;
	int rc;

	if (n > MAXWR)
		die("send of %d", n);
	for (int i = 0; i < n; i++) {
		char *save;
		struct ibv_send_wr *w = &swr[i];

		next_line();
		if (strcmp(strtok_r(line, " \t\n", &save), "w"))
			die("want a w line");
		memset(w, 0, sizeof(*w));
		w->wr_id = num(&save);
		w->opcode = num(&save);
		w->send_flags = num(&save);
		w->imm_data = htonl(num(&save)); // host order in the script
		if (w->opcode == IBV_WR_SEND_WITH_INV || w->opcode == IBV_WR_LOCAL_INV)
			w->invalidate_rkey = ntohl(w->imm_data);
		uint64_t raddr = num(&save);
		uint32_t rkey = num(&save);
		uint64_t cmp = num(&save), swap = num(&save);
		uint32_t rqpn = num(&save), rqkey = num(&save);
		int send = w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM;
		if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w->wr.atomic.remote_addr = raddr;
			w->wr.atomic.rkey = rkey;
			w->wr.atomic.compare_add = cmp;
			w->wr.atomic.swap = swap;
		} else if (ud == UD_ALL || (ud == UD_SENDS && send)) {
			w->wr.ud.ah = verbs.ah;
			w->wr.ud.remote_qpn = rqpn;
			w->wr.ud.remote_qkey = rqkey;
		} else {
			w->wr.rdma.remote_addr = raddr;
			w->wr.rdma.rkey = rkey;
		}
		read_sges(&save, i, &w->num_sge, w->send_flags & IBV_SEND_INLINE);
		w->sg_list = sges[i];
		w->next = i + 1 < n ? &swr[i + 1] : NULL;
	}
	rc = ibv_post_send(verbs.qp, &swr[0], &bad);
	return rc ? (int)(bad ? bad - swr : -1) : n;
}

int post_recv(int n, int shared)
{
	struct ibv_recv_wr *bad = NULL;
	int rc;

	if (n > MAXWR)
		die("recv of %d", n);
	for (int i = 0; i < n; i++) {
		char *save;
		struct ibv_recv_wr *w = &rwr[i];

		next_line();
		if (strcmp(strtok_r(line, " \t\n", &save), "r"))
			die("want an r line");
		memset(w, 0, sizeof(*w));
		w->wr_id = num(&save);
		read_sges(&save, i, &w->num_sge, 0);
		w->sg_list = sges[i];
		w->next = i + 1 < n ? &rwr[i + 1] : NULL;
	}
	rc = shared ? ibv_post_srq_recv(verbs.srq, &rwr[0], &bad) : ibv_post_recv(verbs.qp, &rwr[0], &bad);
	return rc ? (int)(bad ? bad - rwr : -1) : n;
}

// ---- records -----------------------------------------------------------

void hex(FILE *f, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

void poll_cq(int n, uint32_t (*flags)(const struct ibv_wc *))
{
	static struct ibv_wc wc[MAXWR];
	int got;

	if (n > MAXWR)
		die("poll of %d", n);
	memset(wc, 0, sizeof(wc));
	got = ibv_poll_cq(verbs.cq, n, wc);
	printf("polled %d\n", got);
	for (int i = 0; i < got; i++) {
		uint32_t imm = wc[i].imm_data;

		if (wc[i].wc_flags & IBV_WC_WITH_IMM)
			imm = ntohl(imm);
		printf("wc %llu %u %u %u %u %u %u %u %u %u %u %u %u\n",
		       (unsigned long long)wc[i].wr_id, wc[i].status, wc[i].opcode,
		       wc[i].vendor_err, wc[i].byte_len, imm, wc[i].qp_num,
		       wc[i].src_qp, flags ? flags(&wc[i]) : wc[i].wc_flags,
		       wc[i].pkey_index, wc[i].slid, wc[i].sl, wc[i].dlid_path_bits);
	}
}

HOSTLOOP int hostloop_send(struct ibv_send_wr *first, long calls)
{
	struct ibv_send_wr *bad;

	for (long i = 0; i < calls; i++) {
		first->wr_id = i;
		if (ibv_post_send(verbs.qp, first, &bad))
			return -1;
	}
	return 0;
}

HOSTLOOP int hostloop_recv(struct ibv_recv_wr *rw, long calls)
{
	struct ibv_recv_wr *bad;

	for (long i = 0; i < calls; i++) {
		rw->wr_id = i;
		if (ibv_post_recv(verbs.qp, rw, &bad))
			return -1;
	}
	return 0;
}

HOSTLOOP int hostloop_poll(struct ibv_wc *wc, int ask, int want, long calls)
{
	for (long i = 0; i < calls; i++)
		if (ibv_poll_cq(verbs.cq, ask, wc) != want)
			return -1;
	return 0;
}
