/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio: drive the first virtio-blk disk (--disk) by hand, as a driver
 * does, polling instead of taking interrupts: check the virtio-mmio
 * identity, negotiate VERSION_1, set up queue 0 (8 entries), then
 *	write one sector of a pattern at sector 1, flush, read it back into
 *	a zeroed buffer and compare; read past the end of the disk (IOERR
 *	expected); an unknown request type (UNSUPP expected)
 * and exit 0.  Each failure has its own exit code (10..19) and line.
 * With "wait=1" it halts instead of exiting, so the VMM can be asked for
 * the disk's counters (5 requests, 1024 bytes, 2 errors) while it runs.
 */
#include "payload.h"

#define VIRTIO_BASE		0xd0000000	/* first virtio-mmio window */
#define R_MAGIC			0x000
#define R_VERSION		0x004
#define R_DEVICE_ID		0x008
#define R_DEV_FEATURES		0x010
#define R_DEV_FEATURES_SEL	0x014
#define R_DRV_FEATURES		0x020
#define R_DRV_FEATURES_SEL	0x024
#define R_QUEUE_SEL		0x030
#define R_QUEUE_NUM_MAX		0x034
#define R_QUEUE_NUM		0x038
#define R_QUEUE_READY		0x044
#define R_QUEUE_NOTIFY		0x050
#define R_STATUS		0x070
#define R_DESC_LO		0x080
#define R_DESC_HI		0x084
#define R_AVAIL_LO		0x090
#define R_AVAIL_HI		0x094
#define R_USED_LO		0x0a0
#define R_USED_HI		0x0a4
#define R_CAPACITY		0x100		/* config: u64 sectors */

#define S_ACK			1
#define S_DRIVER		2
#define S_DRIVER_OK		4
#define S_FEATURES_OK		8
#define QSIZE			8
#define F_NEXT			1
#define F_WRITE			2
#define T_IN			0
#define T_OUT			1
#define T_FLUSH			4
#define POLL_LIMIT		50000000

	.text
/* fail: print @rdi, exit with @esi */
fail:
	pushq	%rsi
	call	puts
	popq	%rdi
	jmp	exit

/*
 * u8 request(u32 type, u64 sector, u32 data_flags): header, 512 bytes of
 * buf (descriptor flags @data_flags, or no data descriptor when
 * @data_flags is ~0), status.  Returns the status byte, or 0xff on timeout.
 * rbx = MMIO base.
 */
request:
	leaq	hdr(%rip), %rax
	movl	%edi, (%rax)
	movl	$0, 4(%rax)
	movq	%rsi, 8(%rax)
	movb	$0xee, status(%rip)
	leaq	desc(%rip), %r8
	/* desc 0: header -> 1 (or 2) */
	movq	%rax, 0(%r8)
	movl	$16, 8(%r8)
	movw	$F_NEXT, 12(%r8)
	movw	$1, 14(%r8)
	cmpl	$-1, %edx
	jne	1f
	movw	$2, 14(%r8)
	jmp	2f
1:	/* desc 1: data -> 2 */
	leaq	buf(%rip), %rax
	movq	%rax, 16(%r8)
	movl	$512, 24(%r8)
	orl	$F_NEXT, %edx
	movw	%dx, 28(%r8)
	movw	$2, 30(%r8)
2:	/* desc 2: status */
	leaq	status(%rip), %rax
	movq	%rax, 32(%r8)
	movl	$1, 40(%r8)
	movw	$F_WRITE, 44(%r8)
	movw	$0, 46(%r8)
	/* avail: ring[idx % QSIZE] = 0, then idx++ */
	leaq	avail(%rip), %r9
	movzwl	2(%r9), %ecx
	movl	%ecx, %eax
	andl	$QSIZE - 1, %eax
	movw	$0, 4(%r9,%rax,2)
	incl	%ecx
	movw	%cx, 2(%r9)		/* x86 stores are ordered */
	movl	$0, R_QUEUE_NOTIFY(%rbx)
	/* wait for used.idx to reach avail.idx */
	leaq	used(%rip), %r10
	movl	$POLL_LIMIT, %eax
3:	cmpw	2(%r10), %cx
	je	4f
	pause
	decl	%eax
	jnz	3b
	movl	$0xff, %eax
	ret
4:	movzbl	status(%rip), %eax
	ret

	.globl	payload_main
payload_main:
	pushq	%rbx
	movl	$VIRTIO_BASE, %ebx
	cmpl	$0x74726976, R_MAGIC(%rbx)
	leaq	m_magic(%rip), %rdi
	movl	$10, %esi
	jne	fail
	cmpl	$2, R_VERSION(%rbx)
	jne	fail
	cmpl	$2, R_DEVICE_ID(%rbx)		/* block */
	jne	fail

	movl	$0, R_STATUS(%rbx)
	movl	$S_ACK | S_DRIVER, R_STATUS(%rbx)
	movl	$1, R_DEV_FEATURES_SEL(%rbx)
	testl	$1, R_DEV_FEATURES(%rbx)	/* VERSION_1 is bit 32 */
	leaq	m_feat(%rip), %rdi
	movl	$11, %esi
	jz	fail
	movl	$1, R_DRV_FEATURES_SEL(%rbx)
	movl	$1, R_DRV_FEATURES(%rbx)
	movl	$0, R_DRV_FEATURES_SEL(%rbx)
	movl	$0, R_DRV_FEATURES(%rbx)
	movl	$S_ACK | S_DRIVER | S_FEATURES_OK, R_STATUS(%rbx)
	testl	$S_FEATURES_OK, R_STATUS(%rbx)
	jz	fail

	movl	$0, R_QUEUE_SEL(%rbx)
	cmpl	$QSIZE, R_QUEUE_NUM_MAX(%rbx)
	leaq	m_queue(%rip), %rdi
	movl	$12, %esi
	jb	fail
	movl	$QSIZE, R_QUEUE_NUM(%rbx)
	leaq	desc(%rip), %rax
	movl	%eax, R_DESC_LO(%rbx)
	shrq	$32, %rax
	movl	%eax, R_DESC_HI(%rbx)
	leaq	avail(%rip), %rax
	movl	%eax, R_AVAIL_LO(%rbx)
	shrq	$32, %rax
	movl	%eax, R_AVAIL_HI(%rbx)
	leaq	used(%rip), %rax
	movl	%eax, R_USED_LO(%rbx)
	shrq	$32, %rax
	movl	%eax, R_USED_HI(%rbx)
	movl	$1, R_QUEUE_READY(%rbx)
	cmpl	$1, R_QUEUE_READY(%rbx)
	jne	fail
	movl	$S_ACK | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK, R_STATUS(%rbx)
	cmpl	$S_ACK | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK, R_STATUS(%rbx)
	jne	fail

	/* write the pattern i * 7 + 3 to sector 1 */
	leaq	buf(%rip), %rdi
	xorl	%ecx, %ecx
1:	leal	3(%rcx,%rcx,2), %eax
	leal	(%rax,%rcx,4), %eax
	movb	%al, (%rdi,%rcx)
	incl	%ecx
	cmpl	$512, %ecx
	jb	1b
	movl	$T_OUT, %edi
	movl	$1, %esi
	xorl	%edx, %edx
	call	request
	leaq	m_write(%rip), %rdi
	movl	$13, %esi
	testl	%eax, %eax
	jnz	fail

	movl	$T_FLUSH, %edi
	xorl	%esi, %esi
	movl	$-1, %edx
	call	request
	leaq	m_flush(%rip), %rdi
	movl	$14, %esi
	testl	%eax, %eax
	jnz	fail

	/* zero the buffer, read sector 1 back, compare */
	leaq	buf(%rip), %rdi
	xorl	%eax, %eax
	movl	$512, %ecx
	rep stosb
	movl	$T_IN, %edi
	movl	$1, %esi
	movl	$F_WRITE, %edx
	call	request
	leaq	m_read(%rip), %rdi
	movl	$15, %esi
	testl	%eax, %eax
	jnz	fail
	leaq	buf(%rip), %rdi
	xorl	%ecx, %ecx
1:	leal	3(%rcx,%rcx,2), %eax
	leal	(%rax,%rcx,4), %eax
	cmpb	%al, (%rdi,%rcx)
	jne	2f
	incl	%ecx
	cmpl	$512, %ecx
	jb	1b
	jmp	3f
2:	leaq	m_data(%rip), %rdi
	movl	$16, %esi
	jmp	fail

3:	/* past the end: IOERR (1) */
	movq	R_CAPACITY(%rbx), %rsi
	movl	$T_IN, %edi
	movl	$F_WRITE, %edx
	call	request
	leaq	m_ioerr(%rip), %rdi
	movl	$17, %esi
	cmpl	$1, %eax
	jne	fail

	/* unknown type: UNSUPP (2) */
	movl	$99, %edi
	xorl	%esi, %esi
	movl	$-1, %edx
	call	request
	leaq	m_unsupp(%rip), %rdi
	movl	$18, %esi
	cmpl	$2, %eax
	jne	fail

	leaq	m_ok(%rip), %rdi
	call	puts
	leaq	key_wait(%rip), %rdi
	call	cmdline_num
	jc	1f
	testq	%rax, %rax
	jz	1f
	leaq	m_wait(%rip), %rdi
	call	puts
	cli
2:	hlt				/* until the VMM is stopped from outside */
	jmp	2b
1:	xorl	%eax, %eax
	popq	%rbx
	ret

	.section .rodata
m_magic:	.asciz	"virtio: no virtio-blk v2 device at 0xd0000000\n"
m_feat:		.asciz	"virtio: feature negotiation failed\n"
m_queue:	.asciz	"virtio: queue setup failed\n"
m_write:	.asciz	"virtio: write failed\n"
m_flush:	.asciz	"virtio: flush failed\n"
m_read:		.asciz	"virtio: read failed\n"
m_data:		.asciz	"virtio: data read back differs\n"
m_ioerr:	.asciz	"virtio: read past the end did not fail with IOERR\n"
m_unsupp:	.asciz	"virtio: unknown type did not get UNSUPP\n"
m_ok:		.asciz	"virtio: write, flush, read back, errors: ok\n"
m_wait:		.asciz	"virtio: waiting for the VMM to stop\n"
key_wait:	.asciz	"wait="

	/* In .data: the flat image must hold them (no .bss). */
	.data
	.balign	4096
desc:		.skip	16 * QSIZE
	.balign	2
avail:		.skip	6 + 2 * QSIZE
	.balign	4096
used:		.skip	6 + 8 * QSIZE
	.balign	16
hdr:		.skip	16
status:		.byte	0
	.balign	512
buf:		.skip	512

	.section .note.GNU-stack, "", @progbits
