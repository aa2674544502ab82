// SPDX-License-Identifier: GPL-2.0
/*
 * insn-count: a QEMU TCG plugin that counts the instructions each vCPU
 * executes, for scripts/vm --insns and the bench's host CPU table.
 *
 * A vCPU's busy time in guest time is not its own work under TCG: with one
 * TCG thread it holds what the other vCPUs ran while it waited its turn,
 * and with a thread per vCPU it moves with the host's load. The number of
 * instructions a vCPU retired is its own and the same on any host. Every
 * translation block gets a callback that adds its instruction count to its
 * vCPU's total (a block cut short by an exception is counted whole: rare
 * next to the millions counted). A thread writes the totals, one line of
 * decimal numbers in vCPU order, to out=FILE every 10 ms and at exit, by
 * writing FILE.tmp and renaming it over FILE, so that a reader (the guest,
 * over 9p) sees one whole line or the one before it.
 *
 * Build: cc -O2 -shared -fPIC -pthread -o insn-count.so insn-count.c
 * Use:   qemu-system-x86_64 ... -plugin insn-count.so,out=FILE,vcpus=N
 *
 * QEMU ships the plugin API's header only in its source. The few
 * declarations below are those of QEMU 7.2's include/qemu/qemu-plugin.h
 * (API version 1; later QEMUs still load version 1 plugins until they
 * raise their minimum).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;

#define MAX_VCPUS 64

/* One cache line a vCPU: with a thread per vCPU they do not share lines. */
static struct {
	uint64_t n;
} __attribute__((aligned(64))) count[MAX_VCPUS];

static unsigned int nvcpus = 1;
static char out[4096], tmp[4200];

/*
 * Only the vCPU's own thread writes its total, so the add needs no lock;
 * the store is atomic so that dump() (another thread) never reads half of
 * it. Pairs with the relaxed load in dump().
 */
static void tb_exec(unsigned int vcpu, void *udata)
{
	if (vcpu < MAX_VCPUS)
		__atomic_store_n(&count[vcpu].n,
				 count[vcpu].n + (uintptr_t)udata,
				 __ATOMIC_RELAXED);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec,
					     QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)
					     qemu_plugin_tb_n_insns(tb));
}

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;

static void dump(void)
{
	unsigned int i;
	FILE *f;

	pthread_mutex_lock(&dump_lock);
	f = fopen(tmp, "w");
	if (f) {
		for (i = 0; i < nvcpus; i++)
			fprintf(f, "%s%llu", i ? " " : "",
				(unsigned long long)
				__atomic_load_n(&count[i].n, __ATOMIC_RELAXED));
		fputc('\n', f);
		if (fclose(f) == 0 && rename(tmp, out) != 0)
			fprintf(stderr, "insn-count: rename %s: %s\n", out,
				strerror(errno));
	}
	pthread_mutex_unlock(&dump_lock);
}

static void *dumper(void *arg)
{
	const struct timespec period = { .tv_nsec = 10 * 1000 * 1000 };

	(void)arg;
	for (;;) {
		nanosleep(&period, NULL);
		dump();
	}
	return NULL;
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	dump();
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const void *info,
			       int argc, char **argv)
{
	pthread_t thread;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			snprintf(out, sizeof(out), "%s", argv[i] + 4);
		} else if (!strncmp(argv[i], "vcpus=", 6)) {
			nvcpus = strtoul(argv[i] + 6, NULL, 10);
		} else {
			fprintf(stderr, "insn-count: unknown argument %s\n",
				argv[i]);
			return -1;
		}
	}
	if (!out[0] || nvcpus < 1 || nvcpus > MAX_VCPUS) {
		fprintf(stderr, "insn-count: needs out=FILE and vcpus=1..%d\n",
			MAX_VCPUS);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	dump();
	if (pthread_create(&thread, NULL, dumper, NULL)) {
		fprintf(stderr, "insn-count: cannot start its thread\n");
		return -1;
	}
	pthread_detach(thread);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
