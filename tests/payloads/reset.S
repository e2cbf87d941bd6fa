/* SPDX-License-Identifier: GPL-2.0-only */
/* reset: pulse the reset line through the i8042 (as Linux's reboot=k does). */
#include "payload.h"

	.text
	.globl	payload_main
payload_main:
	leaq	msg(%rip), %rdi
	call	puts
	movb	$I8042_CMD_RESET, %al
	outb	%al, $PORT_I8042_CMD
	leaq	late(%rip), %rdi	/* the VMM should be gone by now */
	call	puts
	movl	$EXIT_FAIL, %eax
	ret

	.section .rodata
msg:	.asciz	"reset: via i8042\n"
late:	.asciz	"reset: still running after the reset command\n"

	.section .note.GNU-stack, "", @progbits
