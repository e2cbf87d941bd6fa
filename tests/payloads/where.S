/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * where: print the address the VMM loaded the protected-mode part at (entry
 * minus 0x200).  Built as several images with different pref_address and
 * relocatable_kernel, so the tests see the VMM's placement rule at work.
 */
#include "payload.h"

	.text
	.globl	payload_main
payload_main:
	leaq	msg(%rip), %rdi
	call	puts
	leaq	_start(%rip), %rdi
	call	puthex
	movl	$'\n', %edi
	call	putc
	movl	$EXIT_OK, %eax
	ret

	.section .rodata
msg:	.asciz	"where: loaded at "

	.section .note.GNU-stack, "", @progbits
