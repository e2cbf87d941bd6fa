#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# End-to-end comparison (a benchmark, not a test): in one run of the rig's
# test host, with gpin.ko inserted and a memory-backed null_blk as the
# backing, boot the same guest with fio 4K randread/randwrite, iodepth 1
# and 32, numjobs = vCPUs, direct=1, under each configuration:
#   fast, locked, kernel     gpin-vmm --disk ...,pin=MODE,transport=T
#   fast-churn, locked-churn the same with --churn: an mmap_lock writer
#                            mapping 64 KiB 1000 times a second
#   qemu                     QEMU -accel kvm, virtio-blk-pci, cache=none,
#                            aio=io_uring, num-queues = vCPUs
#   direct                   fio in the test host on the backing itself
# Prints progress, then a table of IOPS and mean latency, the ratios and
# gpin.ko's counters per run; writes OUT/e2e.md (with the exact command),
# OUT/e2e.json and OUT/e2e.png.  TCG figures are not absolute: only
# ratios within one run mean something.
#
# Usage: tests/bench/e2e.sh [--build DIR] [--kernel 6.1|6.12]
#            [--configs fast,locked,kernel,fast-churn,locked-churn,qemu,direct]
#            [--cpus "2 4"] [--runtime SEC] [--rw "randread randwrite"]
#            [--qd "1 32"] [--transport pci|mmio] [--quick] [--perf]
#            [--rig-append ARGS] [--report-from WORK] [--out DIR]
#   --build DIR  gpin's meson build (gpin-vmm, gpin-stat); default build/
#   --cpus       guest vCPUs per test-host run; the test host gets as many
#                CPUs (4 on a 2-core machine is oversubscribed); default 2
#   --transport  gpin-vmm's virtio transport (default pci, as QEMU's)
#   --quick      2 vCPUs, randread iodepth 32, 5 s each, under fast,
#                locked, fast-churn, locked-churn, kernel and qemu
#   --rig-append ARGS  test-host kernel command line (tests/rig/rig
#                --append): kvm_amd.npt=1 runs the guests on nested paging,
#                as a real host does, instead of the rig's shadow paging
#   --report-from WORK  no runs: the report of an earlier run's logs
#                (WORK: the "results in" directory it printed)
#   --perf       profile the whole test host (perf record -a) while each
#                configuration runs; flat profiles land beside the logs
#                as perf-CONFIG-CPUS-BOOT.txt
#   --out DIR    where e2e.{md,json,png} go (default docs/results)
# Exit: 0 done, 77 skipped (reason printed), else failed.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
readonly ALL_CONFIGS=fast,locked,kernel,fast-churn,locked-churn,qemu,direct
readonly NULLB_GB=1
readonly GUEST_MEM=512M

usage() {
	sed -n '4,30s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# ---- inside the test host -------------------------------------------------

# The guest's script (it travels base64 on the kernel command line, at
# most 2047 bytes with the rest): each fio run prints its JSON between
# markers; the pause at the end lets the console drain before the exit
# device ends the VMM (QEMU's last block was cut short without it).
guest_script() {
	local cpus=$1 runtime=$2 jobs=$3
	cat <<EOF
[ -b /dev/vda ] || { echo E2E-ERROR no /dev/vda; exit 10; }
for j in $jobs; do rw=\${j%:*}; qd=\${j#*:}
echo E2E-START \$rw \$qd
fio --name=\$rw --filename=/dev/vda --direct=1 --ioengine=libaio --rw=\$rw \\
 --bs=4k --iodepth=\$qd --numjobs=$cpus --size=128M --offset_increment=128M \\
 --time_based --runtime=$runtime --ramp_time=1 --group_reporting \\
 --output-format=json --output=/tmp/r.json >/dev/null 2>&1 || echo E2E-ERROR fio
echo E2E-BEGIN \$rw \$qd; cat /tmp/r.json; echo E2E-END
done
sleep 2
exit 0
EOF
}

# gpin.ko's counters as "fast_fallbacks fast_lockwait_ns locked_fallbacks
# locked_lockwait_ns" (gpin-stat's table), or zeros without the module.
# (%.0f: mawk prints a number past 2^31, a few seconds of lock wait in
# ns, as 5.2e+09, which bash arithmetic cannot read)
module_counters() {
	if [[ -c /dev/gpin ]]; then
		"$GPIN_STAT" | awk '$1 == "fast" {ff = $5; fw = $7}
			$1 == "locked" {lf = $5; lw = $7}
			END {printf "%.0f %.0f %.0f %.0f\n", ff, fw, lf, lw}'
	else
		echo 0 0 0 0
	fi
}

# The test host's KVM counters (all VMs alive), every half second, as
# "starts ends exits mmio_exits io_exits irq_injections halt_exits" into
# $2, where starts/ends count the guest's E2E-START / E2E-BEGIN markers in
# console log $1 so far: the rows between a job's two markers bracket it.
# A VM's counters vanish with it, hence sampling while it runs.
kvm_sampler() {
	# One python process, not a grep, cat and sleep per sample: under TCG
	# those forks took a sixth of the test host's CPU time (perf, --perf).
	exec python3 -c '
import os, sys, time
log, out, d = sys.argv[1], sys.argv[2], "/sys/kernel/debug/kvm/"
names = "exits mmio_exits io_exits irq_injections halt_exits".split()
def counter(name):
    try:
        with open(d + name) as f:
            return f.read().strip()
    except OSError:
        return "0"
starts = begins = pos = 0
tail = b""
with open(out, "w") as o:
    while True:
        try:
            with open(log, "rb") as f:
                f.seek(pos)
                new = f.read()
        except OSError:
            new = b""
        pos += len(new)
        # count markers across read boundaries: keep a short tail
        buf = tail + new
        starts += buf.count(b"E2E-START") - tail.count(b"E2E-START")
        begins += buf.count(b"E2E-BEGIN") - tail.count(b"E2E-BEGIN")
        tail = buf[-16:]
        # Not while the VM is being created: a debugfs read then once
        # hung both sides for good in a 6.1 test host.
        if starts or begins:
            o.write(" ".join([str(starts), str(begins)] +
                             [counter(n) for n in names]) + "\n")
            o.flush()
        time.sleep(0.5)
' "$1" "$2"
}

# KVM exits, MMIO exits and interrupt injections per guest I/O of fio job
# number $3 (1-based) from sampler file $1 and fio's I/O count $2: "- - -"
# when the samples do not bracket the job.
kvm_per_io() {
	awk -v k="$3" -v ios="$2" '
	$1 >= k && !have0 { e0 = $3; m0 = $4; i0 = $6; have0 = 1 }
	$2 >= k && have0 && !have1 { e1 = $3; m1 = $4; i1 = $6; have1 = 1 }
	END {
		if (!have1 || ios <= 0) { print "- - -"; exit }
		printf "%.2f %.2f %.2f\n", (e1 - e0) / ios, (m1 - m0) / ios,
			(i1 - i0) / ios
	}' "$1"
}

# Parses fio JSON blocks from console log $1 into result lines
# "config cpus rw qd iops lat_us ios" appended to $RESULTS.
parse_fio() {
	local log=$1 config=$2 cpus=$3
	tr -d '\r' <"$log" | python3 -c '
import json, sys
config, cpus = sys.argv[1], sys.argv[2]
cur, buf = None, []
for line in sys.stdin:
    if line.startswith("[") and "]" in line[:16]:
        continue    # a kernel message on the console
    if "E2E-BEGIN " in line:
        # QEMU'"'"'s SeaBIOS leaves screen-clearing escapes before the first
        # line the guest prints, so the marker need not start the line.
        cur, buf = line[line.find("E2E-BEGIN "):].split()[1:3], []
    elif line.startswith("E2E-END") and cur:
        text = "".join(buf)
        text = text[text.find("{"):]
        try:
            job = json.loads(text)["jobs"][0]
        except Exception as e:
            print("# %s %s: unparsable fio output (%s)" % (config, cur, e),
                  file=sys.stderr)
            cur = None
            continue
        side = job["read"] if cur[0].endswith("read") else job["write"]
        print(config, cpus, cur[0], cur[1], "%.0f" % side["iops"],
              "%.1f" % (side["lat_ns"]["mean"] / 1000.0),
              side.get("total_ios", 0))
        cur = None
    elif cur:
        buf.append(line)
' "$config" "$cpus"
}

# --perf: stops profiler $1 and writes its flat profile to $2.txt.
perf_stop() {
	kill -INT "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	perf report -i "$2.data" --stdio --no-children --sort comm,dso,sym \
		--percent-limit 0.3 -g none 2>/dev/null >"$2.txt" || true
}

# One configuration: boot (or run fio directly), record results.
run_config() {
	local config=$1 cpus=$2 runtime=$3 jobs=$4 boot=$5
	local log=$RIG_OUT/e2e-$config-$cpus-$boot.log script before after rc=0 t0
	script=$(guest_script "$cpus" "$runtime" "$jobs")
	# loglevel=1: no kernel message (RCU stall warnings under TCG) may cut
	# into the JSON on the console.
	local cmdline="console=ttyS0 quiet loglevel=1 gpin.sh=$(printf '%s' "$script" | base64 -w0)"
	local limit=$((240 + 4 * (runtime + 10) * $(wc -w <<<"$jobs")))
	before=$(module_counters)
	t0=$EPOCHSECONDS
	local samples=$RIG_OUT/kvm-$config-$cpus-$boot.txt sampler=''
	: >"$log"
	if [[ $config != direct ]]; then
		kvm_sampler "$log" "$samples" &
		sampler=$!
	fi
	local profiler=''
	if [[ $PERF == perf ]]; then
		perf record -a -g -F 499 -q -o "$RIG_OUT/perf-$config-$cpus-$boot.data" \
			2>/dev/null &
		profiler=$!
	fi
	case $config in
	fast | locked | kernel | fast-churn | locked-churn)
		local pin=${config%-churn} churn=()
		[[ $config == *-churn ]] && churn=(--churn)
		timeout "$limit" "$VMM" --test-exit-port \
			--kernel "$VMLINUZ" --initrd "$INITRD" \
			--cpus "$cpus" --mem "$GUEST_MEM" "${churn[@]}" \
			--disk "$NULLB,pin=$pin,transport=$TRANSPORT" --cmdline "$cmdline" \
			</dev/null >"$log" 2>&1 || rc=$?
		;;
	qemu)
		timeout "$limit" qemu-system-x86_64 -accel kvm -cpu host \
			-smp "$cpus" -m "$GUEST_MEM" -nographic -no-reboot -nodefaults \
			-serial stdio -kernel "$VMLINUZ" -initrd "$INITRD" \
			-append "$cmdline" \
			-device isa-debug-exit,iobase=0x501,iosize=1 \
			-drive "file=$NULLB,if=none,id=d0,format=raw,cache=none,aio=io_uring" \
			-device "virtio-blk-pci,drive=d0,num-queues=$cpus" \
			</dev/null >"$log" 2>&1 || rc=$?
		# isa-debug-exit: status (v << 1) | 1, so 1 is the guest's 0.
		((rc == 1)) && rc=0
		;;
	direct)
		bash -c "$(guest_script "$cpus" "$runtime" "$jobs" |
			sed "s|/dev/vda|$NULLB|g")" >"$log" 2>&1 || rc=$?
		;;
	esac
	if [[ -n $sampler ]]; then
		kill "$sampler" 2>/dev/null || true
		wait "$sampler" 2>/dev/null || true
	fi
	[[ -n $profiler ]] && perf_stop "$profiler" "$RIG_OUT/perf-$config-$cpus-$boot"
	echo "$rc $log" >"$RIG_OUT/last-boot"
	after=$(module_counters)
	local -a b=($before) a=($after)
	local ffb=$((a[0] - b[0])) flw=$(((a[1] - b[1]) / 1000))
	local lfb=$((a[2] - b[2])) llw=$(((a[3] - b[3]) / 1000))
	local lines c n rw qd iops lat ios job=0 per
	lines=$(parse_fio "$log" "$config" "$cpus")
	if [[ -z $lines ]] || ((rc != 0)); then
		echo "  $config: status $rc; last lines of $log:"
		tr -d '\r' <"$log" | tail -n 15 | sed 's/^/    /'
	fi
	while read -r c n rw qd iops lat ios; do
		[[ -n $c ]] || continue
		job=$((job + 1))
		per="- - -"
		[[ -n $sampler ]] && per=$(kvm_per_io "$samples" "$ios" "$job")
		echo "$c $n $rw $qd $iops $lat $ffb $flw $lfb $llw $per" >>"$RESULTS"
		printf '  %-13s %-9s qd%-3s %9s IOPS %10s us; per I/O: KVM exits, MMIO exits, IRQ injections %s\n' \
			"$c" "$rw" "$qd" "$iops" "$lat" "$per"
	done <<<"$lines"
	local churn_line
	churn_line=$(tr -d '\r' <"$log" | grep '^gpin-vmm: churn: [0-9]' || true)
	printf '  %s done in %d s; gpin.ko: fast %d fallbacks, %d us lock wait; locked %d us lock wait%s\n' \
		"$config" $((EPOCHSECONDS - t0)) "$ffb" "$flw" "$llw" \
		"${churn_line:+; ${churn_line#gpin-vmm: }}"
	tr -d '\r' <"$log" | grep '^gpin-vmm: blk0: gpin.ko' | sed 's/^/  /' || true
}

# The fio jobs of list $3 ("rw:qd ...") that $RESULTS has no line for,
# for configuration $1 with $2 vCPUs.
jobs_left() {
	local j out=''
	for j in $3; do
		grep -q "^$1 $2 ${j%:*} ${j#*:} " "$RESULTS" || out+=${out:+ }$j
	done
	echo "$out"
}

# One configuration, and more boots for the jobs a dead guest left, as the
# death policy allows (tests/lib/gpintest/deaths.py): guests now and then
# triple-fault or stall under load in the TCG test host (docs/RIG.md).
# The report counts the reboots.
run_config_jobs() {
	local config=$1 cpus=$2 runtime=$3 jobs=$4 boot rc log verdict
	for ((boot = 1; ; boot++)); do
		run_config "$config" "$cpus" "$runtime" "$jobs" "$boot"
		jobs=$(jobs_left "$config" "$cpus" "$jobs")
		[[ -n $jobs ]] || return 0
		read -r rc log <"$RIG_OUT/last-boot"
		verdict=0
		"$TOP/tests/lib/deaths" guest --case "$config-$cpus" --log "$log" \
			--status "$rc" | sed 's/^# /  /' || verdict=${PIPESTATUS[0]}
		# 0: no death, so a failure that another boot would repeat
		((verdict == 10)) || break
		echo "$config $cpus" >>"$RIG_OUT/guest-deaths-$cpus.txt"
		echo "  $config: no results for $jobs: the guest died; booting it again for those"
	done
	echo "  $config: still no results for $jobs"
}

inside() {
	VMM=$1 GPIN_STAT=$2 VMLINUZ=$3 INITRD=$4 TRANSPORT=${10} PERF=${11}
	local cpus=$5 runtime=$6 configs=$7 rws=$8 qds=$9 c i=0 n left
	RESULTS=$RIG_OUT/results-$cpus.txt
	# After a test-host crash the rig runs us again (RIG_RUN 2, 3): the
	# jobs that have results keep them and are not run again.
	((${RIG_RUN:-1} > 1)) || : >"$RESULTS"
	[[ -c /dev/kvm ]] || { echo "e2e: no /dev/kvm in the test host"; return 1; }
	modprobe -d "$RIG_MODDIR" null_blk nr_devices=1 memory_backed=1 \
		gb=$NULLB_GB bs=512 || { echo "e2e: null_blk does not load"; return 1; }
	NULLB=/dev/nullb0
	# Every block written once, so reads find data (memory-backed).
	dd if=/dev/zero of=$NULLB bs=1M count=$((NULLB_GB * 1024)) oflag=direct \
		status=none
	echo "# test host $(uname -r), $(nproc) CPUs; guest $cpus vCPUs, $GUEST_MEM;" \
		"backing $NULLB (null_blk memory_backed, ${NULLB_GB} GiB);" \
		"gpin.ko $([[ -c /dev/gpin ]] && echo loaded || echo ABSENT);" \
		"gpin-vmm transport=$TRANSPORT"
	local jobs='' rw qd
	for rw in $rws; do
		for qd in $qds; do
			jobs+="${jobs:+ }$rw:$qd"
		done
	done
	n=$(tr , ' ' <<<"$configs" | wc -w)
	for c in ${configs//,/ }; do
		i=$((i + 1))
		left=$(jobs_left "$c" "$cpus" "$jobs")
		if [[ -z $left ]]; then
			echo "[$i/$n] $c, $cpus vCPUs: done before the test host crashed"
			continue
		fi
		echo "[$i/$n] $c, $cpus vCPUs: fio $rws x iodepth $qds, ${runtime} s each"
		run_config_jobs "$c" "$cpus" "$runtime" "$left"
	done
}

# ---- on the CI host ---------------------------------------------------------

# Table, ratios, JSON and the plot from the results files.
report() {
	local out=$1 cmd=$2 kver=$3 rev=$4
	shift 4
	python3 - "$out" "$cmd" "$kver" "$rev" "$@" <<'EOF'
import json, os, sys, datetime
out, cmd, kver, rev = sys.argv[1:5]
rows = []
for f in sys.argv[5:]:
    for line in open(f):
        p = line.split()
        if len(p) not in (10, 13):
            continue
        per = [None if x == "-" else float(x) for x in (p[10:13] or ["-"] * 3)]
        rows.append(dict(config=p[0], cpus=int(p[1]), rw=p[2], qd=int(p[3]),
                         iops=float(p[4]), lat_us=float(p[5]),
                         fast_fallbacks=int(p[6]), fast_lockwait_us=int(p[7]),
                         locked_fallbacks=int(p[8]), locked_lockwait_us=int(p[9]),
                         kvm_exits_per_io=per[0], mmio_exits_per_io=per[1],
                         irq_injections_per_io=per[2]))
get = {(r["config"], r["cpus"], r["rw"], r["qd"]): r for r in rows}
cases = sorted({(r["cpus"], r["rw"], r["qd"]) for r in rows})
configs = [c for c in "fast locked kernel fast-churn locked-churn qemu direct".split()
           if any(r["config"] == c for r in rows)]
ratios_def = [("fast/locked", "fast", "locked", 1.1),
              ("fast-churn/locked-churn", "fast-churn", "locked-churn", 1.5),
              ("fast/qemu", "fast", "qemu", 1.2),
              ("fast/direct", "fast", "direct", 0.3),
              ("fast/kernel", "fast", "kernel", None)]
lines = []
hdr = "| vCPUs | workload | " + " | ".join(configs) + " |"
lines.append("IOPS (mean latency, us):")
lines.append("")
lines.append(hdr)
lines.append("|" + "---|" * (2 + len(configs)))
for (cpus, rw, qd) in cases:
    cells = []
    for c in configs:
        r = get.get((c, cpus, rw, qd))
        cells.append("%.0f (%.0f)" % (r["iops"], r["lat_us"]) if r else "-")
    lines.append("| %d | %s qd%d | %s |" % (cpus, rw, qd, " | ".join(cells)))
ratios = []
avail = [x for x in ratios_def if x[1] in configs and x[2] in configs]
if avail:
    lines.append("")
    lines.append("Ratios of IOPS (target in brackets):")
    lines.append("")
    lines.append("| vCPUs | workload | " + " | ".join(
        "%s%s" % (n, " [>= %.1f]" % t if t else "") for n, _, _, t in avail) + " |")
    lines.append("|" + "---|" * (2 + len(avail)))
    for (cpus, rw, qd) in cases:
        cells = []
        for n, a, b, t in avail:
            ra, rb = get.get((a, cpus, rw, qd)), get.get((b, cpus, rw, qd))
            if ra and rb and rb["iops"] > 0:
                v = ra["iops"] / rb["iops"]
                ratios.append(dict(cpus=cpus, rw=rw, qd=qd, ratio=n, value=round(v, 3),
                                   target=t, met=(v >= t) if t else None))
                cells.append("%.2f%s" % (v, "" if not t else (" ok" if v >= t else " MISS")))
            else:
                cells.append("-")
        lines.append("| %d | %s qd%d | %s |" % (cpus, rw, qd, " | ".join(cells)))
vm_configs = [c for c in configs if c != "direct"]
if any(r["kvm_exits_per_io"] is not None for r in rows):
    lines.append("")
    lines.append("The test host's KVM per guest I/O: exits / MMIO exits / interrupt"
                 " injections (debugfs, sampled every 0.5 s around each fio job):")
    lines.append("")
    lines.append("| vCPUs | workload | " + " | ".join(vm_configs) + " |")
    lines.append("|" + "---|" * (2 + len(vm_configs)))
    for (cpus, rw, qd) in cases:
        cells = []
        for c in vm_configs:
            r = get.get((c, cpus, rw, qd))
            if r and r["kvm_exits_per_io"] is not None:
                cells.append("%.1f / %.1f / %.1f" % (r["kvm_exits_per_io"],
                             r["mmio_exits_per_io"], r["irq_injections_per_io"]))
            else:
                cells.append("-")
        lines.append("| %d | %s qd%d | %s |" % (cpus, rw, qd, " | ".join(cells)))
lines.append("")
lines.append("gpin.ko counters per run (deltas over the whole configuration):")
lines.append("")
lines.append("| vCPUs | config | fast fallbacks | fast lock wait (us) | locked lock wait (us) |")
lines.append("|---|---|---|---|---|")
seen = set()
for r in rows:
    k = (r["cpus"], r["config"])
    if k in seen:
        continue
    seen.add(k)
    lines.append("| %d | %s | %d | %d | %d |" % (r["cpus"], r["config"], r["fast_fallbacks"],
                 r["fast_lockwait_us"], r["locked_lockwait_us"]))
deaths = os.environ.get("E2E_DEATHS", "")
if deaths:
    lines.append("")
    lines.append("Guests that died under load (triple fault or stall, TCG's nested"
                 " paging: docs/RIG.md) and were booted again for the fio jobs they had left: "
                 + deaths + ".")
table = "\n".join(lines)
print(table)
os.makedirs(out, exist_ok=True)
date = datetime.date.today().isoformat()
transport = os.environ.get("E2E_TRANSPORT", "")
paging = os.environ.get("E2E_PAGING", "")
json.dump(dict(command=cmd, commit=rev, kernel=kver, date=date, transport=transport,
               test_host_paging=paging,
               results=rows,
               ratios=ratios), open(os.path.join(out, "e2e.json"), "w"), indent=1)
with open(os.path.join(out, "e2e.md"), "w") as f:
    f.write("# End-to-end: fio in a guest, gpin-vmm's pin modes against QEMU\n\n")
    f.write("Generated by\n\n    %s\n\n" % cmd)
    f.write("at commit %s on %s, in the rig's QEMU/TCG test host (kernel %s) on a\n"
            "%d-CPU machine; backing: null_blk, memory-backed, in the test host;\n"
            "gpin-vmm's virtio transport: %s; the test host's guests on %s.\n"
            "TCG figures are not absolute and vary run to run: compare ratios\n"
            "within one run.  `direct` is the same fio in the test host on the\n"
            "backing itself; a '-' is a run that gave no result (see the\n"
            "logs).\n\n"
            % (rev, date, kver, os.cpu_count(), transport, paging))
    f.write(table + "\n\n![IOPS per configuration](e2e.png)\n")
# The plot: one group of bars per workload, one bar per configuration.
dat = os.path.join(out, ".e2e.dat")
with open(dat, "w") as f:
    f.write("case " + " ".join(configs) + "\n")
    for (cpus, rw, qd) in cases:
        f.write("%dcpu-%s-qd%d " % (cpus, rw, qd) + " ".join(
            "%.0f" % get[(c, cpus, rw, qd)]["iops"] if (c, cpus, rw, qd) in get else "0"
            for c in configs) + "\n")
gp = """set terminal pngcairo size 1100,500 noenhanced
set output '%s'
set title 'fio 4K in the guest (IOPS), rig TCG test host: ratios only'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside right top autotitle columnheader
set ylabel 'IOPS (log scale)'
set logscale y
set xtics rotate by -30
set grid ytics
plot for [i=2:%d] '%s' using i:xtic(1)
""" % (os.path.join(out, "e2e.png"), len(configs) + 1, dat)
import subprocess
try:
    subprocess.run(["gnuplot"], input=gp.encode(), check=True)
except Exception as e:
    print("e2e: no plot (%s)" % e, file=sys.stderr)
os.unlink(dat)
EOF
}

# The runs of main(): one test host per vCPU count.  Uses main's locals.
run_all() {
	work=$(mktemp -d /var/tmp/gpin-e2e.XXXXXX)
	nrw=$(wc -w <<<"$rws") nqd=$(wc -w <<<"$qds") nconf=$(tr , ' ' <<<"$configs" | wc -w)
	echo "e2e: $nconf configurations x $((nrw * nqd)) fio runs of ${runtime} s," \
		"vCPUs: $cpus_list; guest $KVER; gpin-vmm transport=$transport;" \
		"results in $work"
	echo "$cmd" >"$work/command"
	for cpus in $cpus_list; do
		local dir=$work/cpus$cpus
		echo "=== test host with $cpus CPUs, guest with $cpus vCPUs: $configs"
		mkdir -p "$dir"
		# A test host that dies (TCG's nested SVM, docs/RIG.md) is
		# the rig's to judge: it runs us again once, and the jobs that
		# finished keep their results.
		"$TOP/tests/rig/rig" --kernel "$KVER" --cpus "$cpus" \
			--append "$rig_append" \
			--timeout $((nconf * (300 + 4 * nrw * nqd * (runtime + 10)))) \
			--out "$dir" --insmod "$kbuild/$KVER/gpin.ko" -- \
			"$HERE/e2e.sh" --inside "$vmm" "$stat" "$VMLINUZ" "$INITRD" \
			"$cpus" "$runtime" "$configs" "$rws" "$qds" "$transport" "$perf" ||
			echo "e2e: the test host with $cpus CPUs failed (status $?)"
		[[ -s $dir/results-$cpus.txt ]] && files+=("$dir/results-$cpus.txt")
	done
}

main() {
	if [[ ${1:-} == --inside ]]; then
		shift
		inside "$@"
		return
	fi
	local build=${GPIN_BUILD:-$TOP/build} kernel=6.1 configs=$ALL_CONFIGS
	local cpus_list=2 runtime=10 rws="randread randwrite" qds="1 32" transport=pci
	local perf=- rig_append='' report_from=''
	local out=$TOP/docs/results
	local cmd="tests/bench/e2e.sh $*"
	while (($#)); do
		case $1 in
		--build) build=$2; shift 2 ;;
		--kernel) kernel=$2; shift 2 ;;
		--configs) configs=$2; shift 2 ;;
		--cpus) cpus_list=$2; shift 2 ;;
		--runtime) runtime=$2; shift 2 ;;
		--rw) rws=$2; shift 2 ;;
		--qd) qds=$2; shift 2 ;;
		--transport) transport=$2; shift 2 ;;
		--quick)
			cpus_list=2 rws=randread qds=32 runtime=5
			configs=fast,locked,fast-churn,locked-churn,kernel,qemu
			shift ;;
		--out) out=$2; shift 2 ;;
		--perf) perf=perf; shift ;;
		--rig-append) rig_append=$2; shift 2 ;;
		--report-from) report_from=$2; shift 2 ;;
		-h | --help) usage 0 ;;
		*) echo "e2e: unknown option '$1'" >&2; usage 2 ;;
		esac
	done
	[[ $transport == pci || $transport == mmio ]] ||
		{ echo "e2e: --transport wants pci or mmio" >&2; exit 2; }
	local c
	for c in ${configs//,/ }; do
		[[ ,$ALL_CONFIGS, == *,$c,* ]] || { echo "e2e: unknown config '$c'" >&2; exit 2; }
	done
	((EUID == 0)) || skip "the rig needs root"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
	command -v python3 >/dev/null || skip "python3 (the report) not installed"
	build=$(realpath "$build")
	local vmm=$build/vmm/gpin-vmm stat=$build/pin/gpin-stat
	[[ -x $vmm && -x $stat ]] || skip "no $vmm or $stat: build gpin first (scripts/build)"
	mkdir -p "$out"
	out=$(realpath "$out")

	local img KVER='' VMLINUZ='' INITRD='' KHEADERS=''
	img=$("$TOP/guest-images/build-guest" "$kernel") || skip "no guest image for $kernel"
	eval "$img"
	KHEADERS=/usr/src/linux-headers-$KVER
	local kbuild=${GPIN_PIN_BUILDDIR:-$TOP/build-pin}
	"$TOP/pin/kbuild.sh" "$KHEADERS" "$TOP/pin" "$TOP/include/gpin.h" \
		"$kbuild/$KVER/kmod" "$kbuild/$KVER/gpin.ko" ||
		skip "gpin.ko does not build against $KHEADERS"

	local rev work cpus files=() nrw nqd nconf
	rev=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [[ -n $report_from ]]; then
		# The report of an earlier run's logs (one cut short, say).
		work=$(realpath "$report_from")
		[[ -s $work/command ]] && cmd="$(cat "$work/command") (report: $cmd)"
		local f
		for f in "$work"/cpus*/results-*.txt; do
			[[ -s $f ]] && files+=("$f")
		done
	else
		run_all
	fi
	((${#files[@]})) || { echo "e2e: no results"; exit 1; }
	# (no file at all when no guest died: not an error under pipefail)
	E2E_DEATHS=$( (cat "$work"/cpus*/guest-deaths-*.txt 2>/dev/null || true) | sort | uniq -c |
		awk '{printf "%s%s with %d vCPUs %d time(s)", (NR > 1 ? ", " : ""), $2, $3, $1}')
	local paging='shadow paging (kvm_amd.npt=0, the rig default)'
	[[ " $rig_append " == *" kvm_amd.npt=1 "* ]] &&
		paging='nested paging (kvm_amd.npt=1, as on a real host)'
	export E2E_DEATHS E2E_TRANSPORT=$transport E2E_PAGING=$paging
	echo
	report "$out" "$cmd" "$KVER" "$rev" "${files[@]}"
	echo
	echo "wrote $out/e2e.md, $out/e2e.json, $out/e2e.png (logs: $work)"
}

main "$@"
