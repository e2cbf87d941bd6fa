/* SPDX-License-Identifier: GPL-2.0-only */
/* hello: one line on COM1, then exit status 0. */
#include "payload.h"

	.text
	.globl	payload_main
payload_main:
	leaq	msg(%rip), %rdi
	call	puts
	movl	$EXIT_OK, %eax
	ret

	.section .rodata
msg:	.asciz	"hello from gpin payload\n"

	.section .note.GNU-stack, "", @progbits
