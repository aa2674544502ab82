// SPDX-License-Identifier: GPL-2.0
/*
 * octep-vfu: a vfio-user server (QEMU's docs/interop/vfio-user.rst) for
 * the SDP block, so that QEMU's vfio-user-pci device shows the guest a PCI
 * function octep_ipsec's pci_driver binds to: its probe, BAR mapping,
 * MSI-X and remove run as on a gateway.
 *
 *   octep-vfu [-v] [-n NVEC] [-c CTL] SOCKET
 *
 * -c CTL: a file the server looks for between messages and every 100 ms,
 * with a client or without; it reads the command in it, logs it and
 * removes it. "gone": the
 * function falls off the link (BAR0 reads all ones, writes are lost);
 * "back": it comes back as from a reset (a link that retrained). The
 * guest's tests write it through the repo it shares.
 *
 * Listens on the UNIX socket SOCKET and serves one client at a time; when
 * the client goes, its memory and eventfds are let go and the function
 * keeps its state for the next (the protocol's rule). One thread: each
 * message is answered before the next is read, and the block's timers
 * (dev.c) run between messages, when due.
 *
 * Guest memory comes as file descriptors with VFIO_USER_DMA_MAP (QEMU's
 * memory-backend-memfd,share=on) and is mapped here; interrupts are the
 * client's eventfds (VFIO_USER_DEVICE_SET_IRQS). Behind a vIOMMU
 * (intel-iommu,caching-mode=on) the maps are the guest's IOMMU page
 * tables, page by page, so the block's DMA reaches only what the driver
 * mapped: any other address is a fault, logged ("DMA fault") and counted,
 * as the IOMMU of a gateway would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vfu.h"

/* Page by page behind a vIOMMU: every buffer the driver maps is one. */
#define VFU_MAX_MAPS		65536

/* What the client said it can take (VFIO_USER_VERSION). */
static const char vfu_caps[] =
	"{\"capabilities\":{\"max_msg_fds\":16,\"max_data_xfer_size\":1048576}}";

struct vfu_map {
	u64 addr;
	u64 size;
	void *va;	/* NULL: no fd came with it, not reachable */
	int prot;
};

struct vfu_srv {
	int fd;
	struct vfu_dev dev;
	struct vfu_map *maps;
	unsigned int nmaps;
	unsigned int maps_cap;
	unsigned int last;	/* the map the last DMA hit */
	u64 mapped;	/* bytes the block can reach */
	int fds[VFU_MAX_FDS];
	unsigned int nfds;
	u8 *msg;	/* the message being served, header first */
	u8 *reply;
};

static bool vfu_verbose;

/* ------------------------------------------------ the socket */

static int vfu_read_all(int fd, void *buf, size_t len)
{
	u8 *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* Reads one message and the fds that came with it; -1 at the end. */
static int vfu_recv(struct vfu_srv *s)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VFU_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct vfu_hdr *h = (struct vfu_hdr *)s->msg;
	struct iovec iov = { .iov_base = h, .iov_len = sizeof(*h) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	ssize_t n;

	s->nfds = 0;
	do {
		n = recvmsg(s->fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	} while (n < 0 && errno == EINTR);
	if (n != sizeof(*h))
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		unsigned int k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		memcpy(&s->fds[s->nfds], CMSG_DATA(c), k * sizeof(int));
		s->nfds += k;
	}
	if (h->size < sizeof(*h) || h->size > sizeof(*h) + 64 + VFU_MAX_XFER) {
		fprintf(stderr, "octep-vfu: message of %u bytes\n", h->size);
		return -1;
	}
	return vfu_read_all(s->fd, h + 1, h->size - sizeof(*h));
}

static void vfu_close_fds(struct vfu_srv *s)
{
	while (s->nfds)
		close(s->fds[--s->nfds]);
}

/* Sends the reply to the message being served: @len bytes after the header. */
static void vfu_reply(struct vfu_srv *s, u32 len, int err)
{
	struct vfu_hdr *req = (struct vfu_hdr *)s->msg;
	struct vfu_hdr *h = (struct vfu_hdr *)s->reply;
	size_t off = 0, total;

	if (req->flags & VFU_F_NO_REPLY)
		return;
	h->id = req->id;
	h->cmd = req->cmd;
	h->flags = VFU_F_REPLY | (err ? VFU_F_ERROR : 0);
	h->error = err;
	h->size = sizeof(*h) + (err ? 0 : len);
	total = h->size;
	while (off < total) {
		ssize_t n = send(s->fd, s->reply + off, total - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* the next read sees the end */
		off += n;
	}
}

/* ------------------------------------------------ the commands */

static void *vfu_body(struct vfu_srv *s)
{
	return s->msg + sizeof(struct vfu_hdr);
}

static void *vfu_rbody(struct vfu_srv *s)
{
	return s->reply + sizeof(struct vfu_hdr);
}

static u32 vfu_len(struct vfu_srv *s)
{
	return ((struct vfu_hdr *)s->msg)->size - sizeof(struct vfu_hdr);
}

static void vfu_version(struct vfu_srv *s)
{
	u16 *v = vfu_body(s), *r = vfu_rbody(s);

	if (vfu_len(s) < 4)
		return vfu_reply(s, 0, EINVAL);
	r[0] = v[0];	/* the client's major: there is one */
	r[1] = 0;
	memcpy(&r[2], vfu_caps, sizeof(vfu_caps));
	fprintf(stderr, "octep-vfu: client speaks %u.%u\n", v[0], v[1]);
	vfu_reply(s, 4 + sizeof(vfu_caps), 0);
}

struct vfu_dma_map {
	u32 argsz;
	u32 flags;
	u64 offset;
	u64 addr;
	u64 size;
};

struct vfu_dma_unmap {
	u32 argsz;
	u32 flags;
	u64 addr;
	u64 size;
};

static void vfu_dma_map(struct vfu_srv *s)
{
	struct vfu_dma_map *m = vfu_body(s);
	struct vfu_map *e;
	unsigned int i;
	int prot = 0;

	if (vfu_len(s) < sizeof(*m) || s->nfds > 1)
		return vfu_reply(s, 0, EINVAL);
	for (i = 0; i < s->nmaps; i++)
		if (m->addr < s->maps[i].addr + s->maps[i].size &&
		    s->maps[i].addr < m->addr + m->size)
			return vfu_reply(s, 0, EEXIST);
	if (s->nmaps == VFU_MAX_MAPS)
		return vfu_reply(s, 0, ENOSPC);
	if (s->nmaps == s->maps_cap) {
		unsigned int cap = s->maps_cap ? 2 * s->maps_cap : 64;
		struct vfu_map *n = realloc(s->maps, cap * sizeof(*n));

		if (!n)
			return vfu_reply(s, 0, ENOMEM);
		s->maps = n;
		s->maps_cap = cap;
	}
	e = &s->maps[s->nmaps];
	e->addr = m->addr;
	e->size = m->size;
	e->va = NULL;
	if (m->flags & VFIO_DMA_MAP_FLAG_READ)
		prot |= PROT_READ;
	if (m->flags & VFIO_DMA_MAP_FLAG_WRITE)
		prot |= PROT_WRITE;
	e->prot = prot;
	if (s->nfds) {
		e->va = mmap(NULL, m->size, prot, MAP_SHARED, s->fds[0],
			     m->offset);
		if (e->va == MAP_FAILED) {
			perror("octep-vfu: DMA_MAP mmap");
			return vfu_reply(s, 0, errno);
		}
	}
	s->nmaps++;
	if (e->va)
		s->mapped += e->size;
	if (vfu_verbose)
		fprintf(stderr, "octep-vfu: dma map %#llx+%#llx%s\n",
			(unsigned long long)m->addr, (unsigned long long)m->size,
			e->va ? "" : " (no fd)");
	vfu_reply(s, 0, 0);
}

static void vfu_unmap_one(struct vfu_srv *s, unsigned int i)
{
	if (s->maps[i].va) {
		munmap(s->maps[i].va, s->maps[i].size);
		s->mapped -= s->maps[i].size;
	}
	if (vfu_verbose)
		fprintf(stderr, "octep-vfu: dma unmap %#llx+%#llx\n",
			(unsigned long long)s->maps[i].addr,
			(unsigned long long)s->maps[i].size);
	s->maps[i] = s->maps[--s->nmaps];
}

/*
 * Every map inside the range goes (behind a vIOMMU one invalidation may
 * cover many pages, or the whole space); one that straddles its edge is
 * refused, as VFIO's type1 refuses to split a map.
 */
static void vfu_dma_unmap(struct vfu_srv *s)
{
	struct vfu_dma_unmap *m = vfu_body(s);
	bool all;
	u64 end;
	unsigned int i;

	if (vfu_len(s) < sizeof(*m))
		return vfu_reply(s, 0, EINVAL);
	all = m->flags & VFIO_DMA_UNMAP_FLAG_ALL;
	end = m->addr + m->size;
	for (i = 0; i < s->nmaps && !all; i++) {
		struct vfu_map *e = &s->maps[i];
		bool in = e->addr >= m->addr && e->addr + e->size <= end;

		if (!in && e->addr < end && m->addr < e->addr + e->size)
			return vfu_reply(s, 0, EINVAL);
	}
	for (i = 0; i < s->nmaps;) {
		struct vfu_map *e = &s->maps[i];

		if (all || (e->addr >= m->addr && e->addr + e->size <= end))
			vfu_unmap_one(s, i);	/* the last moves to i */
		else
			i++;
	}
	memcpy(vfu_rbody(s), m, sizeof(*m));
	vfu_reply(s, sizeof(*m), 0);
}

/* ------------------------------------------------ the block's DMA */

static struct vfu_srv *vfu_srv_of(struct vfu_dev *d)
{
	return (struct vfu_srv *)((char *)d - offsetof(struct vfu_srv, dev));
}

/* The map holding @iova with @prot, or NULL. */
static struct vfu_map *vfu_dma_find(struct vfu_srv *s, u64 iova, int prot)
{
	unsigned int i;

	for (i = 0; i < s->nmaps; i++) {
		unsigned int k = (s->last + i) % s->nmaps;
		struct vfu_map *e = &s->maps[k];

		if (iova - e->addr < e->size && (e->prot & prot) == prot &&
		    e->va) {
			s->last = k;
			return e;
		}
	}
	return NULL;
}

/* Walks [iova, iova + len) map by map; copies into @buf when given. */
static int vfu_dma(struct vfu_dev *d, u64 iova, void *buf, u64 len,
		   int prot, const char *what)
{
	struct vfu_srv *s = vfu_srv_of(d);
	u64 a = iova, left = len;

	while (left) {
		struct vfu_map *e = vfu_dma_find(s, a, prot);
		u64 n;

		if (!e) {
			d->dma_faults++;
			fprintf(stderr,
				"octep-vfu: DMA fault: %s %s, %llu bytes at %#llx: %#llx not mapped\n",
				what, prot & PROT_WRITE ? "write" : "read",
				(unsigned long long)len,
				(unsigned long long)iova,
				(unsigned long long)a);
			return -EFAULT;
		}
		n = e->addr + e->size - a;
		if (n > left)
			n = left;
		if (buf) {
			memcpy(buf, (u8 *)e->va + (a - e->addr), n);
			buf = (u8 *)buf + n;
		}
		a += n;
		left -= n;
	}
	return 0;
}

/**
 * vfu_dma_read() - the block reads host memory
 * @d: function
 * @iova: the address the driver gave the block
 * @buf: where the bytes go
 * @len: bytes
 * @what: what is read, for the log
 *
 * Return: 0, or -EFAULT (logged and counted) where the client mapped
 * nothing readable.
 */
int vfu_dma_read(struct vfu_dev *d, u64 iova, void *buf, u32 len,
		 const char *what)
{
	return vfu_dma(d, iova, buf, len, PROT_READ, what);
}

/**
 * vfu_dma_mapped() - how much host memory the block can reach
 * @d: function
 *
 * Return: the bytes the client mapped for the block: all of guest memory
 * without a vIOMMU, what the driver mapped behind one.
 */
u64 vfu_dma_mapped(struct vfu_dev *d)
{
	return vfu_srv_of(d)->mapped;
}

/**
 * vfu_dma_check() - would a DMA of the block reach host memory
 * @d: function
 * @iova: the address the driver gave the block
 * @len: bytes
 * @write: a write (else a read)
 * @what: what is checked, for the log
 *
 * Nothing is copied: the block checks a buffer the host credited.
 *
 * Return: 0, or -EFAULT (logged and counted) as vfu_dma_read().
 */
int vfu_dma_check(struct vfu_dev *d, u64 iova, u64 len, bool write,
		  const char *what)
{
	return vfu_dma(d, iova, NULL, len, write ? PROT_WRITE : PROT_READ,
		       what);
}

static void vfu_get_info(struct vfu_srv *s)
{
	struct vfio_device_info *r = vfu_rbody(s);

	memset(r, 0, sizeof(*r));
	r->argsz = 16;
	r->flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
	r->num_regions = VFU_NUM_REGIONS;
	r->num_irqs = VFU_NUM_IRQS;
	vfu_reply(s, 16, 0);
}

static void vfu_region_info(struct vfu_srv *s)
{
	struct vfio_region_info *q = vfu_body(s), *r = vfu_rbody(s);
	u32 index;

	if (vfu_len(s) < sizeof(*q))
		return vfu_reply(s, 0, EINVAL);
	index = q->index;
	if (index >= VFU_NUM_REGIONS)
		return vfu_reply(s, 0, EINVAL);
	memset(r, 0, sizeof(*r));
	r->argsz = sizeof(*r);
	r->index = index;
	switch (index) {
	case VFU_BAR0:
		r->size = VFU_BAR0_SIZE;
		break;
	case VFU_BAR4:
		r->size = VFU_BAR4_SIZE;
		break;
	case VFU_CONFIG:
		r->size = VFU_CFG_SIZE;
		break;
	}
	if (r->size)
		r->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
	vfu_reply(s, sizeof(*r), 0);
}

static void vfu_irq_info(struct vfu_srv *s)
{
	struct vfio_irq_info *q = vfu_body(s), *r = vfu_rbody(s);

	if (vfu_len(s) < sizeof(*q) || q->index >= VFU_NUM_IRQS)
		return vfu_reply(s, 0, EINVAL);
	memset(r, 0, sizeof(*r));
	r->argsz = sizeof(*r);
	r->index = q->index;
	r->flags = VFIO_IRQ_INFO_EVENTFD;
	if (q->index == VFU_IRQ_MSIX) {
		r->flags |= VFIO_IRQ_INFO_NORESIZE;
		r->count = s->dev.nvec;
	} else if (q->index == VFU_IRQ_ERR || q->index == VFU_IRQ_REQ) {
		r->count = 1;
	}
	vfu_reply(s, sizeof(*r), 0);
}

static void vfu_set_irqs(struct vfu_srv *s)
{
	struct vfio_irq_set *q = vfu_body(s);
	struct vfu_dev *d = &s->dev;
	bool set = s->nfds;
	unsigned int i;

	if (vfu_len(s) < sizeof(*q))
		return vfu_reply(s, 0, EINVAL);
	if (q->index == VFU_IRQ_ERR || q->index == VFU_IRQ_REQ) {
		int *fd = q->index == VFU_IRQ_ERR ? &d->err_fd : &d->req_fd;

		if (!(q->flags & VFIO_IRQ_SET_ACTION_TRIGGER) || q->start ||
		    q->count > 1 || s->nfds > q->count)
			return vfu_reply(s, 0, EINVAL);
		if (*fd >= 0)
			close(*fd);
		*fd = s->nfds ? s->fds[0] : -1;
		s->nfds = 0;	/* kept */
		return vfu_reply(s, 0, 0);
	}
	if (q->index != VFU_IRQ_MSIX) {
		/* No INTx, no MSI: only "none". */
		return vfu_reply(s, 0, q->count ? EINVAL : 0);
	}
	if (!(q->flags & VFIO_IRQ_SET_ACTION_TRIGGER))
		return vfu_reply(s, 0, 0);	/* masking is QEMU's */
	if (q->start > d->nvec || q->count > d->nvec - q->start)
		return vfu_reply(s, 0, EINVAL);
	if ((q->flags & VFIO_IRQ_SET_DATA_NONE) && !q->count) {
		for (i = 0; i < d->nvec; i++) {
			if (d->irq_fd[i] >= 0)
				close(d->irq_fd[i]);
			d->irq_fd[i] = -1;
		}
		return vfu_reply(s, 0, 0);
	}
	if (!(q->flags & VFIO_IRQ_SET_DATA_EVENTFD))
		return vfu_reply(s, 0, EINVAL);
	/* As many fds as vectors, or none: those vectors lose theirs. */
	if (s->nfds && s->nfds != q->count)
		return vfu_reply(s, 0, EINVAL);
	for (i = 0; i < q->count; i++) {
		int *fd = &d->irq_fd[q->start + i];

		if (*fd >= 0)
			close(*fd);
		*fd = set ? s->fds[i] : -1;
	}
	s->nfds = 0;	/* kept */
	if (vfu_verbose)
		fprintf(stderr, "octep-vfu: MSI-X %u..%u %s\n", q->start,
			q->start + q->count, set ? "set" : "cleared");
	vfu_reply(s, 0, 0);
}

struct vfu_rw {
	u64 offset;
	u32 region;
	u32 count;
	u8 data[];
};

static int vfu_rw(struct vfu_srv *s, struct vfu_rw *a, void *buf, bool wr)
{
	struct vfu_dev *d = &s->dev;

	switch (a->region) {
	case VFU_CONFIG:
		return wr ? vfu_cfg_write(d, a->offset, buf, a->count) :
			    vfu_cfg_read(d, a->offset, buf, a->count);
	case VFU_BAR0:
		return wr ? vfu_bar0_write(d, a->offset, buf, a->count) :
			    vfu_bar0_read(d, a->offset, buf, a->count);
	case VFU_BAR4:
		/* Outside QEMU's table and PBA: nothing there. */
		if (a->offset > VFU_BAR4_SIZE ||
		    a->count > VFU_BAR4_SIZE - a->offset)
			return -EINVAL;
		if (!wr)
			memset(buf, 0, a->count);
		return 0;
	}
	return -EINVAL;
}

static void vfu_region_read(struct vfu_srv *s)
{
	struct vfu_rw *q = vfu_body(s), *r = vfu_rbody(s);
	int err;

	if (vfu_len(s) < sizeof(*q) || q->count > VFU_MAX_XFER)
		return vfu_reply(s, 0, EINVAL);
	*r = *q;
	err = vfu_rw(s, q, r->data, false);
	vfu_reply(s, sizeof(*r) + q->count, -err);
}

static void vfu_region_write(struct vfu_srv *s)
{
	struct vfu_rw *q = vfu_body(s), *r = vfu_rbody(s);
	int err;

	if (vfu_len(s) < sizeof(*q) || q->count > vfu_len(s) - sizeof(*q))
		return vfu_reply(s, 0, EINVAL);
	*r = *q;
	err = vfu_rw(s, q, q->data, true);
	vfu_reply(s, sizeof(*r), -err);
}

static void vfu_serve(struct vfu_srv *s)
{
	struct vfu_hdr *h = (struct vfu_hdr *)s->msg;

	if ((h->flags & VFU_F_TYPE) != VFU_F_CMD) {
		fprintf(stderr, "octep-vfu: unexpected reply %u\n", h->cmd);
		return;
	}
	switch (h->cmd) {
	case VFU_VERSION:
		vfu_version(s);
		break;
	case VFU_DMA_MAP:
		vfu_dma_map(s);
		break;
	case VFU_DMA_UNMAP:
		vfu_dma_unmap(s);
		break;
	case VFU_DEVICE_GET_INFO:
		vfu_get_info(s);
		break;
	case VFU_GET_REGION_INFO:
		vfu_region_info(s);
		break;
	case VFU_GET_IRQ_INFO:
		vfu_irq_info(s);
		break;
	case VFU_SET_IRQS:
		vfu_set_irqs(s);
		break;
	case VFU_REGION_READ:
		vfu_region_read(s);
		break;
	case VFU_REGION_WRITE:
		vfu_region_write(s);
		break;
	case VFU_DEVICE_RESET:
		fprintf(stderr, "octep-vfu: reset\n");
		vfu_dev_reset(&s->dev);
		vfu_reply(s, 0, 0);
		break;
	default:
		if (vfu_verbose)
			fprintf(stderr, "octep-vfu: command %u not served\n",
				h->cmd);
		vfu_reply(s, 0, ENOTSUP);
		break;
	}
	vfu_close_fds(s);
}

/* The client went: its memory and eventfds go, the function stays. */
static void vfu_disconnect(struct vfu_srv *s)
{
	unsigned int i;

	while (s->nmaps)
		vfu_unmap_one(s, 0);
	for (i = 0; i < VFU_NVEC_MAX; i++) {
		if (s->dev.irq_fd[i] >= 0)
			close(s->dev.irq_fd[i]);
		s->dev.irq_fd[i] = -1;
	}
	if (s->dev.err_fd >= 0)
		close(s->dev.err_fd);
	if (s->dev.req_fd >= 0)
		close(s->dev.req_fd);
	s->dev.err_fd = -1;
	s->dev.req_fd = -1;
	close(s->fd);
	s->fd = -1;
	fprintf(stderr, "octep-vfu: %lu DMA faults\n", s->dev.dma_faults);
}

static int vfu_listen(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "octep-vfu: socket path too long: %s\n", path);
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
		perror("octep-vfu: bind");
		close(fd);
		return -1;
	}
	return fd;
}

/* The control file's command, if one came (see the header). */
static void vfu_ctl(struct vfu_dev *d, const char *path)
{
	char cmd[16] = "";
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(cmd, sizeof(cmd), f))
		cmd[0] = 0;
	fclose(f);
	unlink(path);
	cmd[strcspn(cmd, "\n")] = 0;
	fprintf(stderr, "octep-vfu: control: %s\n", cmd);
	if (!strcmp(cmd, "gone")) {
		d->gone = true;
	} else if (!strcmp(cmd, "back")) {
		u8 cfg[VFU_CFG_SIZE];

		/*
		 * The block's registers are reset; config space is kept, as
		 * QEMU, which mirrors parts of it, would not see it change.
		 */
		memcpy(cfg, d->cfg, sizeof(cfg));
		vfu_dev_reset(d);
		memcpy(d->cfg, cfg, sizeof(cfg));
		d->gone = false;
	} else {
		fprintf(stderr, "octep-vfu: control: unknown command\n");
	}
}

/*
 * Waits for @p up to 100 ms, or to the block's next timer (the rules'
 * layer, dev.c), whichever comes first; then runs the timers that are
 * due, whether @p came or not. Returns what poll() does.
 */
static int vfu_poll(struct pollfd *p, struct vfu_dev *d)
{
	struct timespec ts = { .tv_nsec = 100 * NSEC_PER_MSEC };
	u64 next = vfu_dev_timer(d), now = vfu_now();
	int n;

	if (next && next <= now)
		ts.tv_nsec = 0;
	else if (next && next - now < 100 * NSEC_PER_MSEC)
		ts.tv_nsec = next - now;
	n = ppoll(p, 1, &ts, NULL);
	vfu_dev_tick(d, vfu_now());
	return n;
}

/* The next message, looking at the control file while none comes. */
static int vfu_next(struct vfu_srv *s, const char *ctl)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	for (;;) {
		int n = vfu_poll(&p, &s->dev);

		vfu_ctl(&s->dev, ctl);
		if (n > 0)
			return vfu_recv(s);
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

/*
 * The next client, looking at the control file while none comes: between
 * an unplug and the plug that follows (QEMU's device_del, device_add) the
 * function has no client, and a test may bring it back to the link then.
 */
static int vfu_accept(int lfd, struct vfu_dev *d, const char *ctl)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	for (;;) {
		int n = vfu_poll(&p, d), fd;

		vfu_ctl(d, ctl);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0 || (errno != EINTR && errno != ECONNABORTED))
			return fd;
	}
}

static void vfu_usage(void)
{
	fprintf(stderr, "usage: octep-vfu [-v] [-n NVEC] [-c CTL] SOCKET\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct vfu_srv s;
	unsigned int nvec = VFU_NVEC_DEF;
	const char *ctl = NULL;
	int lfd, opt;

	while ((opt = getopt(argc, argv, "vn:c:")) != -1) {
		switch (opt) {
		case 'c':
			ctl = optarg;
			break;
		case 'v':
			vfu_verbose = true;
			break;
		case 'n':
			nvec = strtoul(optarg, NULL, 0);
			if (nvec < 17 || nvec > VFU_NVEC_MAX) {
				fprintf(stderr, "octep-vfu: -n: 17 to %u vectors\n",
					VFU_NVEC_MAX);
				return 2;
			}
			break;
		default:
			vfu_usage();
		}
	}
	if (optind != argc - 1)
		vfu_usage();
	s.msg = malloc(sizeof(struct vfu_hdr) + 64 + VFU_MAX_XFER);
	s.reply = malloc(sizeof(struct vfu_hdr) + 64 + VFU_MAX_XFER);
	if (!s.msg || !s.reply)
		return 1;
	vfu_dev_init(&s.dev, nvec);
	s.dev.verbose = vfu_verbose;
	lfd = vfu_listen(argv[optind]);
	if (lfd < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "octep-vfu: %04x:%04x, %u MSI-X vectors, on %s\n",
		VFU_VENDOR, VFU_DEVICE, nvec, argv[optind]);
	for (;;) {
		s.fd = vfu_accept(lfd, &s.dev, ctl);
		if (s.fd < 0) {
			perror("octep-vfu: accept");
			return 1;
		}
		fprintf(stderr, "octep-vfu: client connected\n");
		while (!vfu_next(&s, ctl))
			vfu_serve(&s);
		vfu_close_fds(&s);
		vfu_disconnect(&s);
		fprintf(stderr, "octep-vfu: client gone\n");
	}
}
