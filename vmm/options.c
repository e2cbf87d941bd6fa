// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "log.h"
#include "options.h"

enum {
	OPT_KERNEL = 'k',
	OPT_INITRD = 'i',
	OPT_CPUS = 'c',		/* kvmtool's lkvm run letters */
	OPT_PARAMS = 'p',
	OPT_MEM = 'm',
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
	OPT_DISK = 'd',
	OPT_QUIET = 'q',
	OPT_VERBOSE = 'v',
	OPT_DOMAIN = 0x100,
	OPT_PRINT_CONFIG,
	OPT_API_SOCKET,
	OPT_CHURN,
	OPT_TEST_EXIT_PORT,
	OPT_CMDLINE,		/* --params before 0.3; warns */
};

static const struct option long_options[] = {
	{ "kernel",	required_argument, NULL, OPT_KERNEL },
	{ "initrd",	required_argument, NULL, OPT_INITRD },
	{ "cpus",	required_argument, NULL, OPT_CPUS },
	{ "params",	required_argument, NULL, OPT_PARAMS },
	{ "cmdline",	required_argument, NULL, OPT_CMDLINE },
	{ "mem",	required_argument, NULL, OPT_MEM },
	{ "disk",	required_argument, NULL, OPT_DISK },
	{ "domain",	required_argument, NULL, OPT_DOMAIN },
	{ "print-config", no_argument,	   NULL, OPT_PRINT_CONFIG },
	{ "api-socket",	required_argument, NULL, OPT_API_SOCKET },
	{ "churn",	optional_argument, NULL, OPT_CHURN },
	{ "test-exit-port", no_argument,   NULL, OPT_TEST_EXIT_PORT },
	{ "quiet",	no_argument,	   NULL, OPT_QUIET },
	{ "verbose",	no_argument,	   NULL, OPT_VERBOSE },
	{ "help",	no_argument,	   NULL, OPT_HELP },
	{ "version",	no_argument,	   NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

void options__usage(FILE *out, const char *prog)
{
	fprintf(out,
"Usage: %s --kernel BZIMAGE [options]\n"
"Boot a Linux guest on KVM with several vCPU threads in one process.\n"
"\n"
"  -k, --kernel FILE    Linux bzImage (boot protocol 2.12+, 64-bit entry)\n"
"  -i, --initrd FILE    initramfs loaded below 3 GiB\n"
"  -c, --cpus N         vCPUs, 1..%d, one thread each, named vcpuN (default 1)\n"
"  -p, --params STR     kernel command line (default: \"%s\"); --cmdline is\n"
"                       its old name, kept for one release\n"
"  -m, --mem SIZE       guest RAM with unit K, M or G, plain number = MiB,\n"
"                       %llu MiB..%llu GiB (default %llu MiB)\n"
"  -d, --disk PATH[,ro][,pin=fast|locked|registered|kernel][,queues=N]\n"
"             [,service=vcpu|iothread]\n"
"             [,event_idx=on|off][,transport=mmio|pci][,iops=N][,bps=N[KMG]]\n"
"             [,poll=US][,irq_hold=auto|US]\n"
"                       virtio-blk disk on a file or block device, O_DIRECT;\n"
"                       up to %d; queues default to one per vCPU (max %d);\n"
"                       service=vcpu: the notifying vCPU submits (default),\n"
"                       service=iothread: a thread per queue woken by\n"
"                       ioeventfd (io= is its old name, kept for one\n"
"                       release).\n"
"                       event_idx=off: do not offer VIRTIO_RING_F_EVENT_IDX.\n"
"                       transport=pci: virtio-pci (modern) on PCI bus 0, an\n"
"                       MSI-X vector per queue (default; mmio when KVM\n"
"                       cannot inject MSIs); transport=mmio: virtio-mmio,\n"
"                       one interrupt line.\n"
"                       pin=fast|locked: gpin.ko's async DIO, pages pinned by\n"
"                       its lockless walk or under mmap_lock; pin=kernel:\n"
"                       io_uring (the host kernel pins); default fast when\n"
"                       this process can open /dev/gpin, else kernel (the\n"
"                       start-up line says why).  pin=registered: guest RAM\n"
"                       is pinned once at VM start (long-term, charged to\n"
"                       RLIMIT_MEMLOCK as VmPin: ulimit -l must cover guest\n"
"                       RAM unless CAP_IPC_LOCK) and each request does no\n"
"                       pin work; needs gpin.ko, guest RAM at most 4 GiB;\n"
"                       never the default.\n"
"                       iops=, bps=: at most N requests, N bytes of data a\n"
"                       second, all queues together (requests wait in the\n"
"                       guest's ring).  poll=US: a busy queue that ran empty\n"
"                       is looked at again after US microseconds (three\n"
"                       times) before the guest must notify; default 0, off.\n"
"                       irq_hold=auto|US: interrupt coalescing: a\n"
"                       completion's interrupt waits while the guest keeps\n"
"                       adding requests to its queue or others are in\n"
"                       flight, so one interrupt covers several (ends early\n"
"                       when the guest stops adding; backs off at qd1);\n"
"                       auto (default): at most the longer of the queue's\n"
"                       completion latency and 20 of the guest's gaps\n"
"                       between requests (20..4000 us); US: at most US\n"
"                       microseconds; 0: off\n"
"      --domain FILE    take the VM from a libvirt <domain type='kvm'> XML,\n"
"                       validated against libvirt's schema (replaces the\n"
"                       options above; see docs/LIBVIRT.md)\n"
"      --print-config   print the settings the VM would run with, and exit\n"
"      --api-socket fd=N|path=P\n"
"                       serve the Cloud Hypervisor HTTP API subset libvirt's\n"
"                       ch driver uses; the VM comes from PUT vm.create;\n"
"                       GET vm.counters: the disk queues' counters as JSON\n"
"      --churn[=KIB[,HZ]]\n"
"                       benchmark aid: a VMM thread mmaps, touches and\n"
"                       munmaps KIB (default 64) HZ times a second (default\n"
"                       1000; 0: flat out), an mmap_lock writer as memory\n"
"                       hot-plug or an allocator would be\n"
"      --test-exit-port\n"
"                       test device: a byte the guest writes to I/O port\n"
"                       0x%x ends the VMM with that status (QEMU's\n"
"                       isa-debug-exit; off unless given; with --domain\n"
"                       also <gpin:test-exit-port/> in gpin's metadata)\n"
"  -q, --quiet          only errors and warnings on stderr\n"
"  -v, --verbose        debug messages too\n"
"  -h, --help           this text\n"
"  -V, --version        print the version\n"
"\n"
"Console: the guest's ttyS0 is this terminal (raw mode when stdin is a tty;\n"
"Ctrl-a x quits).  Exit status: 0 when the guest powers off or reboots,\n"
"with --test-exit-port the byte the guest writes to the exit port,\n"
"3 when the guest panics (pvpanic), 2 for bad options or images, 1 for\n"
"other VMM failures.\n"
"\n"
"Host defaults: /etc/gpin/vmm.conf (or $GPIN_VMM_CONF), lines \"pin = fast\",\n"
"\"service = iothread\", \"transport = pci\": for disks that do not say.\n"
"\n"
"Counters: at exit, one line per disk queue on stderr, \"blkN-qM: R requests,\n"
"B bytes, E errors, I interrupts, H holds\" (without the last two when\n"
"irq_hold=0);\n"
"SIGUSR1 prints the same lines while the VM runs,\n"
"each queue's ring (\"blkN-qM-ring: avail A, taken T, used U, ...\"), then\n"
"each vCPU's exits, whether it is in the guest, and its registers.\n",
		prog, VM_CPUS_MAX, DEFAULT_CMDLINE,
		(unsigned long long)(GUEST_MEM_MIN >> 20),
		(unsigned long long)(GUEST_MEM_MAX >> 30),
		(unsigned long long)(DEFAULT_MEM >> 20), VM_DISKS_MAX,
		DISK_QUEUES_MAX, PORT_EXIT);
}

int options__parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned int shift = 20;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case '\0':
		break;
	case 'K':
		shift = 10;
		end++;
		break;
	case 'M':
		shift = 20;
		end++;
		break;
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		return -1;
	}
	/* Accept "512M", "512MB" and "512MiB", as users type all three. */
	if (!strcasecmp(end, "iB"))
		end += 2;
	else if (!strcasecmp(end, "B"))
		end += 1;
	if (*end)
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -1;
	*bytes = (uint64_t)v << shift;
	return 0;
}

static int parse_cpus(const char *s, unsigned int *ncpus)
{
	unsigned long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > VM_CPUS_MAX)
		return -1;
	*ncpus = v;
	return 0;
}

/* Splits off the next ",word" of *s; NULL at the end. */
static char *next_word(char **s)
{
	char *w = *s, *comma;

	if (!w)
		return NULL;
	comma = strchr(w, ',');
	if (comma) {
		*comma = '\0';
		*s = comma + 1;
	} else {
		*s = NULL;
	}
	return w;
}

/* A whole decimal number in 1..@max, with K, M, G (x 1024) if @units. */
static int parse_count(const char *val, uint64_t max, bool units,
		       uint64_t *out)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	n = strtoull(val, &end, 10);
	if (!isdigit((unsigned char)*val) || errno)
		return -1;
	if (units && *end && !end[1]) {
		const char *u = strchr("KMG", *end);

		if (!u)
			return -1;
		shift = 10 * (unsigned int)(u - "KMG" + 1);
		end++;
	}
	if (*end || !n || n > (max >> shift))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

/* poll=, irq_hold=: microseconds, 0 for off. */
static int parse_disk_us(const char *w, const char *val, unsigned int *us,
			 char *err, size_t errlen)
{
	uint64_t n = 0;

	if (strcmp(val, "0") && parse_count(val, DISK_POLL_US_MAX, false, &n))
		return err__set(err, errlen, "--disk: %s=%s: expected 0 to %d "
				"microseconds", w, val, DISK_POLL_US_MAX);
	*us = n;
	return 0;
}

/* irq_hold=auto, or microseconds as poll= (0: off). */
static int parse_irq_hold(const char *val, struct disk_config *d, char *err,
			  size_t errlen)
{
	unsigned int us;

	if (!strcmp(val, "auto")) {
		d->irq_hold_us = DISK_IRQ_HOLD_AUTO;
		return 0;
	}
	if (parse_disk_us("irq_hold", val, &us, err, errlen))
		return err__set(err, errlen, "--disk: irq_hold=%s: expected "
				"auto, or 0 (off) to %d microseconds", val,
				DISK_POLL_US_MAX);
	d->irq_hold_us = us;
	return 0;
}

/* iops=, bps=, poll=: numbers with a range; irq_hold=. */
static int parse_disk_number(const char *w, const char *val,
			     struct disk_config *d, char *err, size_t errlen)
{
	uint64_t n;

	if (!strcmp(w, "iops")) {
		if (parse_count(val, DISK_IOPS_MAX, false, &n))
			return err__set(err, errlen, "--disk: iops=%s: expected "
					"1 to %llu requests a second", val,
					DISK_IOPS_MAX);
		d->iops = n;
		return 0;
	}
	if (!strcmp(w, "bps")) {
		if (parse_count(val, DISK_BPS_MAX, true, &n))
			return err__set(err, errlen, "--disk: bps=%s: expected "
					"bytes a second, 1 to 1024T (K, M, G)",
					val);
		d->bps = n;
		return 0;
	}
	if (!strcmp(w, "poll"))
		return parse_disk_us(w, val, &d->poll_us, err, errlen);
	if (!strcmp(w, "irq_hold"))
		return parse_irq_hold(val, d, err, errlen);
	return err__set(err, errlen, "--disk: unknown option '%s='", w);
}

static int parse_disk_word(char *w, struct disk_config *d, char *err,
			   size_t errlen)
{
	char *val = strchr(w, '=');
	unsigned long n;
	char *end;

	if (!strcmp(w, "ro")) {
		d->ro = true;
		return 0;
	}
	if (!val)
		return err__set(err, errlen, "--disk: unknown flag '%s'", w);
	*val++ = '\0';
	if (!strcmp(w, "pin")) {
		int v = config__word(disk_pin_words, val);

		if (v < 0)
			return err__set(err, errlen, "--disk: pin=%s: expected "
					DISK_PIN_EXPECT, val);
		d->pin = v;
		d->pin_from = CONFIG_FROM_ROUTE;
		return 0;
	}
	if (!strcmp(w, "service") || !strcmp(w, "io")) {
		int v = config__word(disk_io_words, val);

		/* io= means the I/O backend to libvirt and QEMU */
		if (w[0] == 'i')
			pr_warn("--disk: io= is service= since 0.2 (the name "
				"domain XML and vmm.conf use); io= goes in 0.3");
		if (v < 0)
			return err__set(err, errlen, "--disk: service=%s: "
					"expected " DISK_IO_EXPECT, val);
		d->io = v;
		d->io_from = CONFIG_FROM_ROUTE;
		return 0;
	}
	if (!strcmp(w, "event_idx")) {
		/* QEMU's property of the same name: for A/B comparisons */
		if (!strcmp(val, "on"))
			d->no_event_idx = false;
		else if (!strcmp(val, "off"))
			d->no_event_idx = true;
		else
			return err__set(err, errlen,
					"--disk: event_idx=%s: expected on or off",
					val);
		return 0;
	}
	if (!strcmp(w, "transport")) {
		int v = config__word(disk_transport_words, val);

		if (v < 0)
			return err__set(err, errlen, "--disk: transport=%s: "
					"expected " DISK_TRANSPORT_EXPECT, val);
		d->transport = v;
		d->transport_from = CONFIG_FROM_ROUTE;
		return 0;
	}
	if (!strcmp(w, "queues")) {
		errno = 0;
		n = strtoul(val, &end, 10);
		if (!isdigit((unsigned char)*val) || errno || *end || n < 1 ||
		    n > DISK_QUEUES_MAX)
			return err__set(err, errlen,
					"--disk: queues=%s: expected 1 to %d", val,
					DISK_QUEUES_MAX);
		d->queues = n;
		return 0;
	}
	return parse_disk_number(w, val, d, err, errlen);
}

int options__parse_disk(const char *s, struct disk_config *d, char *err,
			size_t errlen)
{
	char buf[PATH_MAX + 64], *rest = buf, *w;

	disk_config__init(d);
	if (strlen(s) >= sizeof(buf))
		return err__set(err, errlen, "--disk: value too long");
	strcpy(buf, s);
	w = next_word(&rest);
	if (!*w)
		return err__set(err, errlen, "--disk '%s': no path", s);
	if (vm_config__set_string(d->path, sizeof(d->path), w, "--disk: path",
				  err, errlen))
		return -1;
	while ((w = next_word(&rest)))
		if (parse_disk_word(w, d, err, errlen))
			return -1;
	return 0;
}

/*
 * 0.2 took kvmtool's letters (-c vCPUs, -p the kernel command line) and
 * its name --params; before, -c was the command line and -p the vCPUs.
 * The old name warns until 0.3, and so does a command line that is only
 * a number: an old -p N.
 */
static void warn_params(int opt, const char *val)
{
	size_t n = strspn(val, "0123456789");

	if (opt == OPT_CMDLINE)
		pr_warn("--cmdline is --params since 0.2 (kvmtool's name); "
			"the old name goes in 0.3");
	else if (n && !val[n])
		pr_warn("the kernel command line is '%s': -p is --params since "
			"0.2, as in kvmtool; vCPUs are -c, --cpus", val);
}

/* A decimal number in [min, max], the whole of @s up to @stop or its end. */
static int parse_bounded(const char *s, char stop, unsigned long min,
			 unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || (*end && *end != stop) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * --churn[=KIB[,HZ]]: the size of the region the churn thread maps and
 * how many map/unmap cycles it makes per second (0: as fast as it can).
 * A fixed rate makes the writer the same load whichever pin mode runs
 * beside it; flat out, it would take a whole CPU from the vCPUs.
 */
static int parse_churn(const char *s, unsigned int *kib, unsigned int *hz)
{
	const char *comma;
	unsigned long v;

	*kib = 64;
	*hz = 1000;
	if (!s)
		return 0;
	if (parse_bounded(s, ',', 4, 1UL << 20, &v))
		return -1;
	*kib = v;
	comma = strchr(s, ',');
	if (!comma)
		return 0;
	if (parse_bounded(comma + 1, '\0', 0, 1000000, &v))
		return -1;
	*hz = v;
	return 0;
}

/* "fd=N" (an inherited listening socket) or "path=P". */
static int parse_api_socket(const char *s, struct vm_options *opts)
{
	unsigned long n;
	char *end;

	if (!strncmp(s, "path=", 5) && s[5]) {
		opts->api_path = s + 5;
		return 0;
	}
	if (strncmp(s, "fd=", 3) || !isdigit((unsigned char)s[3]))
		return -1;
	errno = 0;
	n = strtoul(s + 3, &end, 10);
	if (errno || *end || n > INT_MAX)
		return -1;
	opts->api_fd = n;
	return 0;
}

static int options__check(const struct vm_options *opts, bool vm_given,
			  char *err, size_t errlen)
{
	if ((opts->domain || opts->api_fd >= 0 || opts->api_path) && vm_given)
		return err__set(err, errlen, "%s describes the whole VM: drop "
				"--kernel, --initrd, --cmdline, --cpus, --mem, --disk",
				opts->domain ? "--domain" : "--api-socket");
	if (opts->domain && (opts->api_fd >= 0 || opts->api_path))
		return err__set(err, errlen, "--domain and --api-socket exclude "
				"each other");
	if (opts->domain || opts->api_fd >= 0 || opts->api_path)
		return 0;
	if (!opts->vm.kernel[0])
		return err__set(err, errlen, "--kernel is required (see --help)");
	return 0;
}

int options__parse(struct vm_options *opts, int argc, char **argv,
		   char *err, size_t errlen)
{
	bool vm_given = false;
	int c;

	*opts = (struct vm_options) {
		.api_fd = -1,
		.log_level = LOG_LEVEL_INFO,
	};
	vm_config__init(&opts->vm);
	/* Parsing may run more than once in a process (the unit tests). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":k:i:c:p:m:d:qvhV", long_options,
				NULL)) != -1) {
		if (c > 0 && c < 0x100 && strchr("kicpmd", c))
			vm_given = true;
		switch (c) {
		case OPT_KERNEL:
			if (vm_config__set_string(opts->vm.kernel,
						  sizeof(opts->vm.kernel), optarg,
						  "--kernel", err, errlen))
				return -1;
			break;
		case OPT_INITRD:
			if (vm_config__set_string(opts->vm.initrd,
						  sizeof(opts->vm.initrd), optarg,
						  "--initrd", err, errlen))
				return -1;
			break;
		case OPT_CMDLINE:
		case OPT_PARAMS:
			warn_params(c, optarg);
			if (vm_config__set_string(opts->vm.cmdline,
						  sizeof(opts->vm.cmdline), optarg,
						  "--params", err, errlen))
				return -1;
			break;
		case OPT_CPUS:
			if (parse_cpus(optarg, &opts->vm.ncpus))
				return err__set(err, errlen,
						"--cpus '%s': expected a number from 1 to %d%s",
						optarg, VM_CPUS_MAX,
						isdigit((unsigned char)*optarg) ? "" :
						" (-c is --cpus since 0.2, as in kvmtool; "
						"the kernel command line is -p, --params)");
			break;
		case OPT_MEM:
			if (options__parse_size(optarg, &opts->vm.mem_size))
				return err__set(err, errlen,
						"--mem '%s': expected a size such as 512M or 2G",
						optarg);
			if (opts->vm.mem_size < GUEST_MEM_MIN ||
			    opts->vm.mem_size > GUEST_MEM_MAX)
				return err__set(err, errlen,
						"--mem '%s': must be between %llu MiB and %llu GiB",
						optarg,
						(unsigned long long)(GUEST_MEM_MIN >> 20),
						(unsigned long long)(GUEST_MEM_MAX >> 30));
			break;
		case OPT_DISK:
			if (opts->vm.ndisks == VM_DISKS_MAX)
				return err__set(err, errlen, "at most %d --disk options",
						VM_DISKS_MAX);
			if (options__parse_disk(optarg,
						&opts->vm.disks[opts->vm.ndisks],
						err, errlen))
				return -1;
			opts->vm.ndisks++;
			break;
		case OPT_DOMAIN:
			opts->domain = optarg;
			break;
		case OPT_PRINT_CONFIG:
			opts->print_config = true;
			break;
		case OPT_API_SOCKET:
			if (parse_api_socket(optarg, opts))
				return err__set(err, errlen,
						"--api-socket '%s': expected fd=N or path=P",
						optarg);
			break;
		case OPT_CHURN:
			if (parse_churn(optarg, &opts->vm.churn_kib,
					&opts->vm.churn_hz))
				return err__set(err, errlen,
						"--churn=%s: expected KIB[,HZ], KiB 4 to 1048576, HZ 0 to 1000000",
						optarg);
			break;
		case OPT_TEST_EXIT_PORT:
			opts->vm.test_exit_port = true;
			break;
		case OPT_QUIET:
			opts->log_level = LOG_LEVEL_WARN;
			break;
		case OPT_VERBOSE:
			opts->log_level = LOG_LEVEL_DEBUG;
			break;
		case OPT_HELP:
			opts->help = true;
			return 0;
		case OPT_VERSION:
			opts->version = true;
			return 0;
		case ':':
			return err__set(err, errlen, "option '%s' needs a value",
					argv[optind - 1]);
		default:
			return err__set(err, errlen, "unknown option '%s'",
					argv[optind - 1]);
		}
	}
	if (optind < argc)
		return err__set(err, errlen, "unexpected argument '%s'",
				argv[optind]);
	return options__check(opts, vm_given, err, errlen);
}
