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
 * With range=RFILE it also counts, per vCPU, the instructions executed in
 * given guest address ranges (a module's text, for the bench's cost of a
 * driver per packet). RFILE holds "START END [NAME]" lines, START and END
 * in hex (END exclusive), at most 16; it may appear, change or go while
 * the guest runs (the guest writes it over 9p, aside and renamed): it is
 * read at start and whenever the thread sees its inode, size or mtime
 * change. The counts go, with the totals, to FILE.ranges: "gen G", then
 * "START END NAME" and the counts in vCPU order, a line a range, since
 * generation G (each reading of RFILE is one and starts from zero). A
 * block is counted in the range its first instruction is in: checked
 * when it executes, not when it was translated, since the guest's module
 * text is translated (loading, probing) before its ranges are known, and
 * QEMU keeps a translated block until its cache fills. A reader knows its
 * ranges are in force once FILE.ranges lists them.
 *
 * Build: cc -O2 -shared -fPIC -pthread -o insn-count.so insn-count.c
 * Use:   qemu-system-x86_64 ... -plugin insn-count.so,out=FILE,vcpus=N
 *            [,range=RFILE]
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
#include <sys/stat.h>
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
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;

#define MAX_VCPUS 64
#define MAX_RANGES 16

/* One cache line a vCPU: with a thread per vCPU they do not share lines. */
static struct {
	uint64_t n;
} __attribute__((aligned(64))) count[MAX_VCPUS];

/*
 * One reading of the range file. A new reading replaces the table whole
 * and the old one is never freed: a vCPU may still be adding to it, and a
 * run reads the file a few dozen times at most.
 */
struct range_table {
	uint64_t gen;
	unsigned int n;
	uint64_t lo, hi;		/* the ranges' hull, for a quick miss */
	struct {
		uint64_t start, end;
		char name[32];
	} r[MAX_RANGES];
	struct {
		uint64_t n[MAX_RANGES];
	} __attribute__((aligned(64))) count[MAX_VCPUS];
};

static struct range_table *table;	/* NULL: no ranges */
static uint64_t range_gen;
static char range_file[4096], range_err[200];
static struct stat range_st;
static int range_seen;			/* range_st holds a file's */

static unsigned int nvcpus = 1;
static char out[4096], tmp[4200], rout[4200], rtmp[4300];

/*
 * A block's userdata: its instruction count in bits 48-62 and, when bit 63
 * is set, its first instruction's address in bits 0-47 (sign-extended from
 * bit 47: every x86-64 kernel address and every 32-bit one; a block at an
 * address that does not fit is never in a range).
 */
#define UD_VADDR (1ULL << 63)
#define UD_N(u) (((u) >> 48) & 0x7fff)
#define UD_ADDR(u) ((uint64_t)((int64_t)((u) << 16) >> 16))

_Static_assert(sizeof(void *) == 8, "the userdata needs a 64-bit host");

/*
 * Only the vCPU's own thread writes its counts, so the adds need no lock;
 * the stores are atomic so that dump() (another thread) never reads half
 * of one. Pairs with the relaxed loads in dump().
 */
static void tb_exec(unsigned int vcpu, void *udata)
{
	uint64_t u = (uintptr_t)udata, n = UD_N(u), a;
	struct range_table *t;
	unsigned int i;

	if (vcpu >= MAX_VCPUS)
		return;
	__atomic_store_n(&count[vcpu].n, count[vcpu].n + n, __ATOMIC_RELAXED);
	t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	if (!t || !(u & UD_VADDR))
		return;
	a = UD_ADDR(u);
	if (a < t->lo || a >= t->hi)
		return;
	for (i = 0; i < t->n; i++) {
		if (a >= t->r[i].start && a < t->r[i].end) {
			__atomic_store_n(&t->count[vcpu].n[i],
					 t->count[vcpu].n[i] + n,
					 __ATOMIC_RELAXED);
			return;
		}
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t n = qemu_plugin_tb_n_insns(tb), a = qemu_plugin_tb_vaddr(tb);
	uint64_t u = (n > 0x7fff ? 0x7fff : n) << 48;

	(void)id;
	if (UD_ADDR(a) == a)
		u |= UD_VADDR | (a & ((1ULL << 48) - 1));
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec,
					     QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)u);
}

/*
 * range_parse: a new table from the range file (NULL and range_err set if
 * it has a line that is not "START END [NAME]" with START < END, or too
 * many lines; NULL with range_err empty if it is gone or empty).
 */
static struct range_table *range_parse(void)
{
	struct range_table *t;
	char line[256], name[32];
	unsigned long long s, e;
	unsigned int ln = 0;
	FILE *f;
	int k;

	range_err[0] = 0;
	f = fopen(range_file, "r");
	if (!f)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		fclose(f);
		snprintf(range_err, sizeof(range_err), "out of memory");
		return NULL;
	}
	t->lo = UINT64_MAX;
	while (fgets(line, sizeof(line), f)) {
		ln++;
		name[0] = 0;
		k = sscanf(line, "%llx %llx %31s", &s, &e, name);
		if (k <= 0 && strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (k < 2 || s >= e || t->n == MAX_RANGES) {
			snprintf(range_err, sizeof(range_err),
				 "line %u: not START END [NAME] (hex, START < END, at most %d lines)",
				 ln, MAX_RANGES);
			break;
		}
		t->r[t->n].start = s;
		t->r[t->n].end = e;
		snprintf(t->r[t->n].name, sizeof(t->r[t->n].name), "%s",
			 name[0] ? name : "-");
		if (s < t->lo)
			t->lo = s;
		if (e > t->hi)
			t->hi = e;
		t->n++;
	}
	fclose(f);
	if (range_err[0] || !t->n) {
		free(t);
		return NULL;
	}
	return t;
}

/*
 * range_poll: read the range file again if it changed since the last look
 * (another inode, size or mtime); a new generation either way. Only the
 * dumper thread (and install, before it starts) calls it. Returns -1 if
 * the file it read is malformed.
 */
static int range_poll(void)
{
	struct range_table *t;
	struct stat st;
	int seen;

	if (!range_file[0])
		return 0;
	seen = stat(range_file, &st) == 0;
	if (seen == range_seen &&
	    (!seen || (st.st_ino == range_st.st_ino &&
		       st.st_size == range_st.st_size &&
		       st.st_mtim.tv_sec == range_st.st_mtim.tv_sec &&
		       st.st_mtim.tv_nsec == range_st.st_mtim.tv_nsec)))
		return 0;
	range_seen = seen;
	range_st = st;
	t = range_parse();
	if (t)
		t->gen = range_gen + 1;
	range_gen++;
	__atomic_store_n(&table, t, __ATOMIC_RELEASE);
	if (range_err[0]) {
		fprintf(stderr, "insn-count: %s %s\n", range_file, range_err);
		return -1;
	}
	return 0;
}

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;

/* dump_file: write what print() prints to TMP and rename it over DST. */
static void dump_file(const char *dst, const char *tmpf,
		      void (*print)(FILE *f))
{
	FILE *f = fopen(tmpf, "w");

	if (!f)
		return;
	print(f);
	if (fclose(f) == 0 && rename(tmpf, dst) != 0)
		fprintf(stderr, "insn-count: rename %s: %s\n", dst,
			strerror(errno));
}

static void print_totals(FILE *f)
{
	unsigned int i;

	for (i = 0; i < nvcpus; i++)
		fprintf(f, "%s%llu", i ? " " : "",
			(unsigned long long)
			__atomic_load_n(&count[i].n, __ATOMIC_RELAXED));
	fputc('\n', f);
}

static void print_ranges(FILE *f)
{
	struct range_table *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	unsigned int i, v;

	fprintf(f, "gen %llu\n", (unsigned long long)range_gen);
	if (range_err[0])
		fprintf(f, "# error: %s\n", range_err);
	for (i = 0; t && i < t->n; i++) {
		fprintf(f, "%llx %llx %s", (unsigned long long)t->r[i].start,
			(unsigned long long)t->r[i].end, t->r[i].name);
		for (v = 0; v < nvcpus; v++)
			fprintf(f, " %llu", (unsigned long long)
				__atomic_load_n(&t->count[v].n[i],
						__ATOMIC_RELAXED));
		fputc('\n', f);
	}
}

static void dump(void)
{
	pthread_mutex_lock(&dump_lock);
	dump_file(out, tmp, print_totals);
	if (range_file[0])
		dump_file(rout, rtmp, print_ranges);
	pthread_mutex_unlock(&dump_lock);
}

static void *dumper(void *arg)
{
	const struct timespec period = { .tv_nsec = 10 * 1000 * 1000 };

	(void)arg;
	for (;;) {
		nanosleep(&period, NULL);
		range_poll();
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
		} else if (!strncmp(argv[i], "range=", 6) && argv[i][6]) {
			snprintf(range_file, sizeof(range_file), "%s",
				 argv[i] + 6);
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
	snprintf(rout, sizeof(rout), "%s.ranges", out);
	snprintf(rtmp, sizeof(rtmp), "%s.ranges.tmp", out);
	/* A range file there from the start must be a good one. */
	if (range_poll())
		return -1;
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
