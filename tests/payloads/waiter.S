/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * waiter: one line on COM1, then halt with interrupts off until the VMM
 * stops the VM from outside (vm.shutdown, a signal).  The long-running
 * guest of the libvirt test: it costs no host CPU while it waits.
 */
#include "payload.h"

	.text
	.globl	payload_main
payload_main:
	leaq	msg(%rip), %rdi
	call	puts
	cli
1:	hlt
	jmp	1b

	.section .rodata
msg:	.asciz	"hello from gpin payload, waiting for shutdown\r\n"

	.section .note.GNU-stack, "", @progbits
