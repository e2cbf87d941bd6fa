/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * initrd: find the initrd through boot_params (ramdisk_image/ramdisk_size
 * plus the ext_ high halves) and print its address, then
 * "initrd: size S sum X", X being the 32-bit sum of its bytes, for the test
 * to compare with the file.  The sum runs at roughly 250 KB/s on the PVM
 * host: keep test initrds small.
 * Exit codes: 10 no initrd, 11 it overlaps this image, 12 it ends above
 * the header's initrd_addr_max.
 */
#include "payload.h"

#define BP_EXT_RAMDISK_IMAGE	0x0c0
#define BP_EXT_RAMDISK_SIZE	0x0c4
#define BP_RAMDISK_IMAGE	0x218
#define BP_RAMDISK_SIZE		0x21c
#define BP_INITRD_ADDR_MAX	0x22c

	.text
	.globl	payload_main
payload_main:
	pushq	%rbx
	pushq	%r12
	movl	BP_RAMDISK_IMAGE(%rdi), %ebx
	movl	BP_EXT_RAMDISK_IMAGE(%rdi), %eax
	shlq	$32, %rax
	orq	%rax, %rbx			/* rbx: initrd address */
	movl	BP_RAMDISK_SIZE(%rdi), %r12d
	movl	BP_EXT_RAMDISK_SIZE(%rdi), %eax
	shlq	$32, %rax
	orq	%rax, %r12			/* r12: initrd size */

	movl	$10, %esi
	leaq	msg_none(%rip), %rdx
	testq	%rbx, %rbx
	jz	fail
	testq	%r12, %r12
	jz	fail

	/* [rbx, rbx + r12) must miss [_start, image_end). */
	movl	$11, %esi
	leaq	msg_overlap(%rip), %rdx
	leaq	(%rbx,%r12), %rax
	leaq	_start(%rip), %rcx
	cmpq	%rcx, %rax
	jbe	1f
	leaq	image_end(%rip), %rcx
	cmpq	%rcx, %rbx
	jb	fail
1:	movl	$12, %esi
	leaq	msg_high(%rip), %rdx
	movl	BP_INITRD_ADDR_MAX(%rdi), %ecx
	leaq	-1(%rbx,%r12), %rax
	cmpq	%rcx, %rax
	ja	fail

	leaq	msg_at(%rip), %rdi
	call	puts
	movq	%rbx, %rdi
	call	puthex
	leaq	msg_size(%rip), %rdi
	call	puts
	movq	%r12, %rdi
	call	putdec
	leaq	msg_sum(%rip), %rdi
	call	puts
	xorl	%eax, %eax			/* eax: sum */
	movq	%rbx, %rsi
	movq	%r12, %rcx
2:	movzbl	(%rsi), %edx
	addl	%edx, %eax
	incq	%rsi
	decq	%rcx
	jnz	2b
	movl	%eax, %edi
	call	putdec
	movl	$'\n', %edi
	call	putc
	xorl	%eax, %eax
	popq	%r12
	popq	%rbx
	ret

/* Reached by jump with esi = code, rdx = message. */
fail:
	pushq	%rsi
	pushq	%rdx
	leaq	msg_fail(%rip), %rdi
	call	puts
	popq	%rdi
	call	puts
	popq	%rdi
	jmp	exit

	.section .rodata
msg_at:		.asciz	"initrd: at "
msg_size:	.asciz	"\ninitrd: size "
msg_sum:	.asciz	" sum "
msg_fail:	.asciz	"initrd: FAIL "
msg_none:	.asciz	"no initrd in boot_params\n"
msg_overlap:	.asciz	"initrd overlaps the kernel image\n"
msg_high:	.asciz	"initrd ends above initrd_addr_max\n"

	.section .note.GNU-stack, "", @progbits
