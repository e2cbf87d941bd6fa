/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Entry and runtime shared by every payload guest.
 *
 * The image is linked at 0x100000 but all code is RIP-relative, so it runs
 * wherever the VMM loads it (the "where" payload relies on that).  The VMM
 * enters at load address + 0x200 in 64-bit mode (the bzImage startup_64
 * convention); startup_64 records the entry state for the bootstate payload
 * before touching anything, switches to its own stack, and calls
 *	int payload_main(struct boot_params *bp)	(rdi = bp)
 * whose return value becomes the VMM's exit status through PORT_EXIT.
 *
 * Calling convention of the helpers below: arguments in rdi/rsi, result in
 * rax; rax, rcx, rdx, rsi, rdi, r8-r11 may be clobbered (System V).
 */
#include "payload.h"

	.section .text.head, "ax"
	.code32
	.globl	_start
_start:				/* 32-bit boot entry: not supported, park */
1:	hlt
	jmp	1b

	.org	0x200
	.code64
	.globl	startup_64
startup_64:
	movq	%rsp, boot_rsp(%rip)
	movq	%rsi, boot_rsi(%rip)
	movw	%cs, boot_cs(%rip)
	movw	%ds, boot_ds(%rip)
	movw	%es, boot_es(%rip)
	movw	%ss, boot_ss(%rip)
	leaq	stack_top(%rip), %rsp
	pushfq
	popq	boot_rflags(%rip)
	movq	boot_rsi(%rip), %rdi
	call	payload_main
	movl	%eax, %edi
	jmp	exit

	.text
/* void exit(u8 code): report @code to the VMM and never return. */
	.globl	exit
exit:
	movl	%edi, %eax
	movw	$PORT_EXIT, %dx
	outb	%al, %dx
	cli
1:	hlt			/* only reached if the VMM ignored the port */
	jmp	1b

/* void putc(char c): one byte to COM1, waiting for THRE (polled, no IRQ). */
	.globl	putc
putc:
	movw	$PORT_COM1 + UART_LSR, %dx
1:	inb	%dx, %al
	testb	$UART_LSR_THRE, %al
	jz	1b
	movl	%edi, %eax
	movw	$PORT_COM1 + UART_THR, %dx
	outb	%al, %dx
	ret

/* void puts(const char *s) */
	.globl	puts
puts:
	pushq	%rbx
	movq	%rdi, %rbx
1:	movzbl	(%rbx), %edi
	testl	%edi, %edi
	jz	2f
	call	putc
	incq	%rbx
	jmp	1b
2:	popq	%rbx
	ret

/* void putdec(u64 v): unsigned decimal. */
	.globl	putdec
putdec:
	movq	%rdi, %rax
	movl	$10, %ecx
	leaq	numbuf_end(%rip), %rsi
	movb	$0, (%rsi)
1:	xorl	%edx, %edx
	divq	%rcx
	addb	$'0', %dl
	decq	%rsi
	movb	%dl, (%rsi)
	testq	%rax, %rax
	jnz	1b
	movq	%rsi, %rdi
	jmp	puts

/* void puthex(u64 v): "0x" and hex digits, no leading zeros. */
	.globl	puthex
puthex:
	movq	%rdi, %rax
	leaq	numbuf_end(%rip), %rsi
	movb	$0, (%rsi)
1:	movl	%eax, %edx
	andl	$0xf, %edx
	leaq	hexdigits(%rip), %rcx
	movb	(%rcx,%rdx), %dl
	decq	%rsi
	movb	%dl, (%rsi)
	shrq	$4, %rax
	jnz	1b
	movb	$'x', -1(%rsi)
	movb	$'0', -2(%rsi)
	leaq	-2(%rsi), %rdi
	jmp	puts

/*
 * u64 cmdline_num(const char *key): the decimal number after @key (e.g.
 * "code=") in the kernel command line, where @key starts the line or follows
 * a space.  Sets CF and returns 0 when absent or not a number.  Reads at most
 * 4096 bytes of command line: a broken cmd_line_ptr cannot hang the guest.
 */
	.globl	cmdline_num
cmdline_num:
	pushq	%rbx
	movq	boot_rsi(%rip), %rax
	movl	BP_CMD_LINE_PTR(%rax), %esi	/* esi: current position */
	testl	%esi, %esi
	jz	.Lnotfound
	leaq	4096(%rsi), %r8			/* r8: scan limit */
	movq	%rsi, %r9			/* r9: start of line */
.Lscan:
	cmpq	%r8, %rsi
	jae	.Lnotfound
	cmpb	$0, (%rsi)
	je	.Lnotfound
	cmpq	%r9, %rsi
	je	.Lcompare
	cmpb	$' ', -1(%rsi)
	jne	.Lnext
.Lcompare:					/* does key match at rsi? */
	xorl	%ecx, %ecx
1:	movb	(%rdi,%rcx), %al
	testb	%al, %al
	jz	.Lmatched
	cmpb	%al, (%rsi,%rcx)
	jne	.Lnext
	incq	%rcx
	jmp	1b
.Lnext:
	incq	%rsi
	jmp	.Lscan
.Lmatched:
	addq	%rcx, %rsi
	xorl	%eax, %eax
	xorl	%ebx, %ebx			/* ebx: digits seen */
1:	movzbl	(%rsi), %ecx
	subl	$'0', %ecx
	cmpl	$9, %ecx
	ja	2f
	imulq	$10, %rax
	addq	%rcx, %rax
	incq	%rsi
	incl	%ebx
	cmpl	$19, %ebx			/* no overflow past 19 digits */
	jb	1b
2:	testl	%ebx, %ebx
	jz	.Lnotfound
	popq	%rbx
	clc
	ret
.Lnotfound:
	xorl	%eax, %eax
	popq	%rbx
	stc
	ret

	.section .rodata
hexdigits:
	.ascii	"0123456789abcdef"

	.data
	.balign	8
	.globl	boot_rsp, boot_rsi, boot_rflags, boot_cs, boot_ds, boot_es, boot_ss
boot_rsp:	.quad	0
boot_rsi:	.quad	0
boot_rflags:	.quad	0
boot_cs:	.word	0
boot_ds:	.word	0
boot_es:	.word	0
boot_ss:	.word	0
numbuf:		.skip	24
numbuf_end:	.byte	0
	.balign	16
stack:		.skip	8192	/* in .data, not .bss: the flat image holds it */
stack_top:

	.section .note.GNU-stack, "", @progbits
