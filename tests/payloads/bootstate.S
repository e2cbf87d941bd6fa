/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bootstate: check the state the VMM hands a bzImage's 64-bit entry point
 * (see the contract in vmm/arch/x86/layout.h and tests/hostdirect/run.sh).
 * Run with "bootstate=1" on the command line.  Prints "bootstate: ok" and
 * exits 0, or prints the first broken item and exits with its number.
 */
#include "payload.h"

/* Fail with @code and a message unless the flags say "equal". */
.macro	expect_eq code, text
	je	9f
	leaq	8f(%rip), %rdi
	movl	$\code, %esi
	jmp	fail
	.section .rodata
8:	.asciz	"\text"
	.text
9:
.endm

	.text
	.globl	payload_main
payload_main:
	pushq	%rbx
	movq	%rdi, %rbx			/* rbx: boot_params */

	cmpq	$ZERO_PAGE, boot_rsi(%rip)
	expect_eq 10, "RSI is not the zero page (0x7000)"
	cmpw	$BOOT_CS, boot_cs(%rip)
	expect_eq 11, "CS is not 0x10"
	cmpw	$BOOT_DS, boot_ds(%rip)
	expect_eq 12, "DS is not 0x18"
	cmpw	$BOOT_DS, boot_es(%rip)
	expect_eq 12, "ES is not 0x18"
	cmpw	$BOOT_DS, boot_ss(%rip)
	expect_eq 12, "SS is not 0x18"
	testq	$0x200, boot_rflags(%rip)
	expect_eq 13, "interrupts enabled at entry"
	cmpq	$BOOT_STACK_TOP, boot_rsp(%rip)
	expect_eq 14, "RSP is not 0x8ff0"

	cmpl	$0x53726448, BP_HDR_MAGIC(%rbx)	/* "HdrS" */
	expect_eq 15, "zero page has no setup header (HdrS)"
	cmpb	$0, BP_TYPE_OF_LOADER(%rbx)
	jne	1f
	leaq	warn_loader(%rip), %rdi
	call	puts
1:
	/* e820: 1..128 entries, one of them RAM (type 1) holding the image. */
	movzbl	BP_E820_ENTRIES(%rbx), %ecx
	leal	-1(%rcx), %eax
	cmpl	$E820_MAX_ENTRIES, %eax
	setb	%al
	cmpb	$1, %al
	expect_eq 16, "e820_entries is 0 or more than 128"
	leaq	BP_E820_TABLE(%rbx), %rsi
	leaq	_start(%rip), %rdx
	leaq	image_end(%rip), %r8
2:	cmpl	$1, 16(%rsi)
	jne	3f
	cmpq	(%rsi), %rdx
	jb	3f
	movq	(%rsi), %rax
	addq	8(%rsi), %rax
	cmpq	%rax, %r8
	jbe	4f
3:	addq	$20, %rsi
	loop	2b
	movl	$1, %eax
	testl	%eax, %eax			/* not found: ZF=0 */
	jmp	5f
4:	xorl	%eax, %eax			/* ZF=1 */
5:	expect_eq 17, "no e820 RAM entry covers the loaded image"

	leaq	key(%rip), %rdi
	call	cmdline_num
	cmpq	$1, %rax
	expect_eq 18, "command line lacks bootstate=1"

	/* The identity map reaches the 4th GiB: the APICs answer there. */
	movl	$LAPIC_BASE, %esi
	movl	LAPIC_VERSION(%rsi), %eax
	testb	%al, %al
	setz	%cl
	cmpb	$0xff, %al
	sete	%dl
	orb	%dl, %cl
	cmpb	$0, %cl
	expect_eq 19, "no xAPIC at 0xfee00000 (version reads 0 or ~0)"
	movl	LAPIC_ID(%rsi), %eax
	shrl	$24, %eax
	cmpl	$0, %eax
	expect_eq 20, "the BSP's APIC id is not 0"
	movl	$IOAPIC_BASE, %esi
	movl	$1, (%rsi)			/* IOREGSEL = IOAPICVER */
	movl	0x10(%rsi), %eax		/* IOWIN */
	testb	%al, %al
	setz	%cl
	cmpb	$0xff, %al
	sete	%dl
	orb	%dl, %cl
	cmpb	$0, %cl
	expect_eq 21, "no IOAPIC at 0xfec00000 (version reads 0 or ~0)"

	leaq	ok(%rip), %rdi
	call	puts
	xorl	%eax, %eax
	popq	%rbx
	ret

/* fail(msg, code): never returns. */
fail:
	pushq	%rsi
	pushq	%rdi
	leaq	failmsg(%rip), %rdi
	call	puts
	popq	%rdi
	call	puts
	movl	$'\n', %edi
	call	putc
	popq	%rdi
	jmp	exit

	.section .rodata
key:		.asciz	"bootstate="
ok:		.asciz	"bootstate: ok\n"
failmsg:	.asciz	"bootstate: FAIL "
warn_loader:	.asciz	"bootstate: warning: type_of_loader is 0\n"

	.section .note.GNU-stack, "", @progbits
