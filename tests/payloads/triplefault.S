/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * triplefault: with an empty IDT, the #UD from ud2 cannot be delivered
 * (#GP), nor can the #GP (#DF), nor the #DF: the CPU shuts down.  KVM
 * reports KVM_EXIT_SHUTDOWN, which the VMM treats as a reset (status 0).
 *
 * Why ud2 and not int3: on the PVM host /dev/kvm, a software interrupt
 * (int3, int $n) through a null IDT ends in KVM_EXIT_INTERNAL_ERROR
 * (emulation failure) instead of a shutdown; a fault does not.
 */
#include "payload.h"

	.text
	.globl	payload_main
payload_main:
	leaq	msg(%rip), %rdi
	call	puts
	lidt	null_idt(%rip)
	ud2
	leaq	late(%rip), %rdi
	call	puts
	movl	$EXIT_FAIL, %eax
	ret

	.section .rodata
	.balign	8
null_idt:
	.word	0		/* limit */
	.quad	0		/* base */
msg:	.asciz	"triplefault: ud2 with a null IDT\n"
late:	.asciz	"triplefault: survived\n"

	.section .note.GNU-stack, "", @progbits
