/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exitcode: exit with the number given as "code=N" on the kernel command
 * line (N taken modulo 256, as the exit port is one byte); without one,
 * say so and exit EXIT_NO_ARG.
 */
#include "payload.h"

	.text
	.globl	payload_main
payload_main:
	pushq	%rbx
	leaq	key(%rip), %rdi
	call	cmdline_num
	jc	1f
	movq	%rax, %rbx
	leaq	msg(%rip), %rdi
	call	puts
	movq	%rbx, %rdi
	call	putdec
	movl	$'\n', %edi
	call	putc
	movl	%ebx, %eax
	popq	%rbx
	ret
1:	leaq	nokey(%rip), %rdi
	call	puts
	movl	$EXIT_NO_ARG, %eax
	popq	%rbx
	ret

	.section .rodata
key:	.asciz	"code="
msg:	.asciz	"exitcode: "
nokey:	.asciz	"exitcode: no code= on the command line\n"

	.section .note.GNU-stack, "", @progbits
