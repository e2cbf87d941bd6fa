/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * madt: find the ACPI tables the way Linux does (RSDP by scanning the BIOS
 * area on 16-byte boundaries, then XSDT or RSDT) and count the enabled
 * processor entries in the MADT.  Run with "cpus=N": prints
 * "madt: N lapics" and exits 0 when the MADT describes exactly N CPUs.
 * Exit codes: 10 no RSDP, 11 bad RSDP checksum, 12 no MADT, 13 bad MADT
 * checksum, 14 MADT local APIC address not 0xfee00000, 1 wrong count.
 */
#include "payload.h"

#define SIG_RSDP		0x2052545020445352	/* "RSD PTR " */
#define SIG_APIC		0x43495041		/* "APIC" */
#define MADT_LAPIC		0
#define MADT_X2APIC		9

	.text
	.globl	payload_main
payload_main:
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	leaq	key(%rip), %rdi
	call	cmdline_num
	jc	.Lnoarg
	movq	%rax, %r13			/* r13: expected N */

	/* RSDP */
	movl	$BIOS_START, %ebx
	movabsq	$SIG_RSDP, %rax
1:	cmpq	%rax, (%rbx)
	je	2f
	addl	$16, %ebx
	cmpl	$BIOS_END, %ebx
	jb	1b
	movl	$10, %esi
	leaq	msg_nordsp(%rip), %rdi
	jmp	fail
2:	movq	%rbx, %rdi
	movl	$20, %esi
	call	checksum
	movl	$11, %esi
	leaq	msg_rsdpsum(%rip), %rdi
	testb	%al, %al
	jnz	fail

	/* XSDT (8-byte entries) when revision >= 2 and present, else RSDT. */
	movl	16(%rbx), %r8d			/* r8: SDT */
	movl	$4, %r9d			/* r9: entry size */
	cmpb	$2, 15(%rbx)
	jb	3f
	movq	24(%rbx), %rax
	testq	%rax, %rax
	jz	3f
	movq	%rax, %r8
	movl	$8, %r9d
3:	movl	4(%r8), %ecx			/* SDT length */
	leaq	(%r8,%rcx), %r10		/* r10: end of entries */
	leaq	36(%r8), %r11			/* r11: entry */
4:	cmpq	%r10, %r11
	jae	.Lnomadt
	movl	(%r11), %ebx
	cmpl	$8, %r9d
	jne	5f
	movq	(%r11), %rbx
5:	cmpl	$SIG_APIC, (%rbx)
	je	.Lmadt
	addq	%r9, %r11
	jmp	4b
.Lnomadt:
	movl	$12, %esi
	leaq	msg_nomadt(%rip), %rdi
	jmp	fail

.Lmadt:						/* rbx: MADT */
	movq	%rbx, %rdi
	movl	4(%rbx), %esi
	call	checksum
	movl	$13, %esi
	leaq	msg_madtsum(%rip), %rdi
	testb	%al, %al
	jnz	fail
	movl	$14, %esi
	leaq	msg_lapicaddr(%rip), %rdi
	cmpl	$LAPIC_BASE, 36(%rbx)
	jne	fail

	/* Walk the entries: type, length, ...; flags bit 0 = enabled. */
	xorl	%r12d, %r12d			/* r12: count */
	movl	4(%rbx), %ecx
	leaq	(%rbx,%rcx), %r10
	leaq	44(%rbx), %rsi
6:	leaq	2(%rsi), %rax
	cmpq	%r10, %rax
	ja	8f
	movzbl	1(%rsi), %ecx
	cmpl	$2, %ecx			/* a zero length would spin */
	jb	8f
	cmpb	$MADT_LAPIC, (%rsi)
	jne	7f
	testb	$1, 4(%rsi)
	jz	9f
	incl	%r12d
	jmp	9f
7:	cmpb	$MADT_X2APIC, (%rsi)
	jne	9f
	testb	$1, 8(%rsi)
	jz	9f
	incl	%r12d
9:	addq	%rcx, %rsi
	jmp	6b

8:	leaq	msg_madt(%rip), %rdi
	call	puts
	movq	%r12, %rdi
	call	putdec
	leaq	msg_lapics(%rip), %rdi
	call	puts
	xorl	%eax, %eax
	cmpq	%r13, %r12
	je	.Lout
	movl	$EXIT_FAIL, %eax
	jmp	.Lout

.Lnoarg:
	leaq	msg_noarg(%rip), %rdi
	call	puts
	movl	$EXIT_NO_ARG, %eax
.Lout:
	popq	%r13
	popq	%r12
	popq	%rbx
	ret

/* u8 checksum(const u8 *p, u32 len): the byte sum, 0 for a valid table. */
checksum:
	xorl	%eax, %eax
	movl	%esi, %ecx
	testl	%ecx, %ecx
	jz	2f
1:	addb	(%rdi), %al
	incq	%rdi
	loop	1b
2:	ret

/* fail(msg, code): never returns. */
fail:
	pushq	%rsi
	pushq	%rdi
	leaq	msg_fail(%rip), %rdi
	call	puts
	popq	%rdi
	call	puts
	popq	%rdi
	jmp	exit

	.section .rodata
key:		.asciz	"cpus="
msg_madt:	.asciz	"madt: "
msg_lapics:	.asciz	" lapics\n"
msg_fail:	.asciz	"madt: FAIL "
msg_nordsp:	.asciz	"no RSDP in 0xe0000-0xfffff\n"
msg_rsdpsum:	.asciz	"RSDP checksum\n"
msg_nomadt:	.asciz	"no APIC table in the RSDT/XSDT\n"
msg_madtsum:	.asciz	"MADT checksum\n"
msg_lapicaddr:	.asciz	"MADT local APIC address is not 0xfee00000\n"
msg_noarg:	.asciz	"madt: no cpus=N on the command line\n"

	.section .note.GNU-stack, "", @progbits
