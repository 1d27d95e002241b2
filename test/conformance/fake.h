// fake.h: the plumbing both conformance harnesses share (harness.c for
// rxe and siw, mlx5.c for mlx5): the fake kernel's --wrap'd entry points,
// device discovery over a throwaway sysfs, the script's reader and the
// records both print. fake.c implements it; each harness links it and
// supplies what differs: its name, its command handler and its mappings
// (the hooks below).
//
// A test reference only, like the harnesses; written for purerdma.

#ifndef PURERDMA_CONFORMANCE_FAKE_H
#define PURERDMA_CONFORMANCE_FAKE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

// ---- hooks: each harness defines these -------------------------------

// harness_name prefixes die's and trace's messages.
extern const char harness_name[];

// kernel_write is the fake kernel's command handler: every write to the
// command fd. It returns n, or -1 with errno set.
ssize_t kernel_write(const void *buf, size_t n);

// kernel_mmap maps len bytes at offset off of the command fd: it returns
// the memory, or MAP_FAILED with errno set.
void *kernel_mmap(size_t len, off_t off);

// kernel_ioctl, if a harness sets it, answers the ioctls on the command
// fd (the whole request and its argument); it returns 0, or -1 with errno
// set. Left NULL, every ioctl fails with ENOTTY: libibverbs then takes
// the kernel for one without the ioctl framework and writes every
// command.
extern int (*kernel_ioctl)(unsigned long req, void *arg);

// kernel_owns reports whether addr is memory kernel_mmap returned, which
// munmap then leaves alone.
int kernel_owns(const void *addr);

// ---- the fake kernel ---------------------------------------------------

// fake_fd is the command fd (a descriptor of /dev/null), async_fd the
// one GET_CONTEXT answers with.
extern int fake_fd, async_fd;

// verbose: trace prints (on stderr); set by the harness.
extern int verbose;

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// struct fake_device is the one device netlink discovery reports.
struct fake_device {
	const char *name; // the ibdev name
	uint32_t driver_id; // enum rdma_driver_id
	enum ibv_node_type node_type;
	uint32_t abi_ver; // the provider's ABI version
};

// struct fake_sizes is what a setup line gives, in its order: the slots
// of the SQ, the RQ (0: the QP receives from the SRQ), the SRQ (0: none)
// and the CQ, then the QP's and the SRQ's limits.
struct fake_sizes {
	uint32_t sq, rq, srq, cq;
	uint32_t max_send_sge, max_recv_sge, max_inline, srq_max_sge;
};

// read_sizes reads the numbers of a setup line.
void read_sizes(char **save, struct fake_sizes *z);

// struct fake_setup is what the harness's setup line asks for.
struct fake_setup {
	const struct fake_device *dev;
	int cqe;
	const struct ibv_ah_attr *ah; // NULL: no address handle
	const struct ibv_srq_attr *srq; // NULL: no SRQ
	int shared; // the QP receives from the SRQ
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	enum ibv_qp_state state; // the QP is moved from INIT up to this
};

// verbs holds the objects fake_create made.
struct fake_verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_ah *ah;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
};
extern struct fake_verbs verbs;

// fake_init sets up what every script needs before its first line.
void fake_init(void);

// fake_create opens the device and creates the objects of s, dying on
// the first that fails.
void fake_create(const struct fake_setup *s);

// ---- the script --------------------------------------------------------

// line is the script line being read.
extern char line[1 << 16];

// pattern is the inline data source, the same bytes as the Go side's.
extern uint8_t pattern[4096];

// next_command reads the script up to its next command, passing over
// empty lines and comments, and returns the command's word (save goes on
// to the rest of its line), or NULL at the end of the script.
char *next_command(char **save);

// word reads the next word of the line, which cmd needs.
char *word(char **save, const char *cmd);

// num reads the next number of the line.
uint64_t num(char **save);

// How a UD QP's send lines fill the work request: rxe-ud names the
// address handle in SENDs only, mlx5-ud in every send that is not an
// atomic.
enum { UD_NONE, UD_SENDS, UD_ALL };

// post_send reads n w lines and posts them to verbs.qp; post_recv reads
// n r lines and posts them to verbs.srq if shared, else verbs.qp. Each
// returns how many were posted: n, the index of the bad one, or -1.
int post_send(int n, int ud);
int post_recv(int n, int shared);

// hex prints n bytes in memory order.
void hex(FILE *f, const void *p, size_t n);

// poll_cq polls verbs.cq for up to n completions and prints them. flags,
// if not NULL, gives the flags to print for each.
void poll_cq(int n, uint32_t (*flags)(const struct ibv_wc *));

// The count command's loops (both harnesses): each runs calls operations
// on verbs.qp or verbs.cq and nothing else, so that valgrind
// --toggle-collect=hostloop_* counts them alone (HostCost in
// internal/provider/conformance). hostloop_send posts the list at first,
// hostloop_recv the receive rw, each with wr_id the call's index;
// hostloop_poll polls ask completions, each call finding want. They return
// 0, or -1 at the first failure. noclone keeps each loop one symbol under
// its own name.
#define HOSTLOOP __attribute__((noinline, noclone))
int hostloop_send(struct ibv_send_wr *first, long calls);
int hostloop_recv(struct ibv_recv_wr *rw, long calls);
int hostloop_poll(struct ibv_wc *wc, int ask, int want, long calls);

#endif
