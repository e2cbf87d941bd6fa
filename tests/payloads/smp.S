/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * smp: bring up the APs the way firmware and Linux do, and count them.
 *
 * Run with "cpus=N" (N = the VMM's --cpus).  The BSP copies a real-mode
 * trampoline to AP_TRAMPOLINE, broadcasts INIT and then STARTUP (vector
 * AP_TRAMPOLINE >> 12, twice, as the MP spec says) to all but itself.  Each
 * AP prints its initial APIC id (CPUID.1:EBX[31:24]), bumps a counter with a
 * locked increment and parks in hlt.  The BSP waits, with a bounded spin,
 * for N-1 APs: "smp: N cpus up" and status 0, or status 1 on timeout.
 * Every AP runs on its own vCPU thread in the VMM, so this is the test that
 * more than one vCPU really runs.
 *
 * With "apexit=C" as well, the APs write C to PORT_EXIT once counted and the
 * BSP parks in cli; hlt instead of exiting: the VMM must end with status C
 * although the vCPU that asked is not the BSP and the BSP never exits KVM_RUN
 * on its own.
 */
#include "payload.h"

#define SIPI_VECTOR		(AP_TRAMPOLINE >> 12)
#define TR(sym)			((sym) - trampoline)	/* offset in trampoline */
/*
 * How long the BSP waits, in TSC ticks: 2^34 is 4-17 s for a 1-4 GHz TSC.
 * A time bound, not a spin count: the PVM host runs a pause/load loop some
 * hundred times slower than hardware, so no count suits both.
 */
#define WAIT_TSC_SHIFT		34

	.text
	.globl	payload_main
payload_main:
	pushq	%rbx
	pushq	%r12
	leaq	key(%rip), %rdi
	call	cmdline_num
	jc	.Lnoarg
	testq	%rax, %rax
	jz	.Lnoarg
	movq	%rax, %r12			/* r12: N */

	/* Copy the trampoline; its lock and counter start at zero. */
	leaq	trampoline(%rip), %rsi
	movl	$AP_TRAMPOLINE, %edi
	movl	$trampoline_end - trampoline, %ecx
	cld
	rep movsb
	leaq	key_apexit(%rip), %rdi
	call	cmdline_num
	movl	$AP_TRAMPOLINE + TR(tr_exit), %edi
	movb	%al, (%rdi)			/* 0 when absent */

	leaq	msg_start(%rip), %rdi
	call	puts
	movl	$ICR_INIT | ICR_LEVEL_ASSERT | ICR_ALL_BUT_SELF, %edi
	call	send_ipi
	movl	$ICR_STARTUP | ICR_ALL_BUT_SELF | SIPI_VECTOR, %edi
	call	send_ipi
	movl	$ICR_STARTUP | ICR_ALL_BUT_SELF | SIPI_VECTOR, %edi
	call	send_ipi

	/* Wait for N-1 APs, until the TSC passes r8. */
	rdtsc
	shlq	$32, %rdx
	orq	%rax, %rdx
	movq	$1, %r8
	shlq	$WAIT_TSC_SHIFT, %r8
	addq	%rdx, %r8
	leaq	-1(%r12), %rbx
	movl	$AP_TRAMPOLINE + TR(tr_count), %esi
1:	movzwl	(%rsi), %eax
	cmpq	%rbx, %rax
	je	.Lallup
	pause
	rdtsc
	shlq	$32, %rdx
	orq	%rax, %rdx
	cmpq	%r8, %rdx
	jb	1b

	leaq	msg_timeout(%rip), %rdi
	call	puts
	movl	$AP_TRAMPOLINE + TR(tr_count), %esi
	movzwl	(%rsi), %edi
	call	putdec
	leaq	msg_of(%rip), %rdi
	call	puts
	movq	%rbx, %rdi
	call	putdec
	leaq	msg_timeout2(%rip), %rdi
	call	puts
	movl	$EXIT_FAIL, %eax
	jmp	.Lout

.Lallup:
	leaq	msg_smp(%rip), %rdi
	call	puts
	movq	%r12, %rdi
	call	putdec
	leaq	msg_up(%rip), %rdi
	call	puts
	movl	$AP_TRAMPOLINE + TR(tr_exit), %esi
	cmpb	$0, (%rsi)
	jne	.Lpark
	xorl	%eax, %eax
	jmp	.Lout
.Lpark:						/* apexit: an AP ends the VM */
	cli
	hlt
	jmp	.Lpark

.Lnoarg:
	leaq	msg_noarg(%rip), %rdi
	call	puts
	movl	$EXIT_NO_ARG, %eax
.Lout:
	popq	%r12
	popq	%rbx
	ret

/*
 * send_ipi(u32 icr_lo): write the xAPIC ICR (destination via shorthand, so
 * ICR_HI is 0), then wait -- bounded -- for the delivery-status bit to clear.
 */
send_ipi:
	movl	$LAPIC_BASE, %esi
	movl	$0, LAPIC_ICR_HI(%rsi)
	movl	%edi, LAPIC_ICR_LO(%rsi)
	movl	$100000, %ecx
1:	testl	$ICR_DELIVERY_PENDING, LAPIC_ICR_LO(%rsi)
	jz	2f
	pause
	loop	1b
2:	ret

/*
 * The AP trampoline: copied to AP_TRAMPOLINE, entered in real mode at
 * CS = AP_TRAMPOLINE >> 4, IP = 0.  Data is addressed as offsets from its
 * start with DS = CS.  The lock serialises the APs' UART output and their
 * shared stack at the top of the trampoline page; the count is bumped under
 * it, after printing, so when the BSP sees the last AP counted all AP
 * output is out and the BSP's own line cannot interleave with it.
 */
	.code16
	.balign	16
trampoline:
	cli
	movw	%cs, %ax
	movw	%ax, %ds
	movw	%ax, %ss
	movw	$0x1000, %sp
1:	movb	$1, %al
	xchgb	%al, TR(tr_lock)
	testb	%al, %al
	jz	2f
	pause
	jmp	1b
2:	movw	$TR(tr_msg), %si
	call	tr_puts
	movl	$1, %eax
	cpuid
	shrl	$24, %ebx
	movw	%bx, %ax
	call	tr_putdec
	movw	$TR(tr_nl), %si
	call	tr_puts
	lock incw TR(tr_count)
	movb	$0, TR(tr_lock)
	movb	TR(tr_exit), %al
	testb	%al, %al
	jz	3f
	movw	$PORT_EXIT, %dx
	outb	%al, %dx
3:	cli
	hlt
	jmp	3b

/* tr_putc(al), tr_puts(ds:si), tr_putdec(ax < 1000): polled COM1. */
tr_putc:
	pushw	%ax
	movw	$PORT_COM1 + UART_LSR, %dx
1:	inb	%dx, %al
	testb	$UART_LSR_THRE, %al
	jz	1b
	popw	%ax
	movw	$PORT_COM1 + UART_THR, %dx
	outb	%al, %dx
	ret
tr_puts:
	lodsb
	testb	%al, %al
	jz	1f
	call	tr_putc
	jmp	tr_puts
1:	ret
tr_putdec:
	movb	$10, %cl
	movb	$0, %ch				/* ch: leading digit printed */
	movb	$100, %bl
1:	xorb	%ah, %ah
	divb	%bl				/* al = digit, ah = rest */
	movb	%ah, %bh
	cmpb	$1, %bl
	je	2f				/* last digit always shows */
	testb	%al, %al
	jnz	2f
	testb	%ch, %ch
	jz	3f
2:	addb	$'0', %al
	call	tr_putc
	movb	$1, %ch
3:	movb	%bh, %al
	xorb	%ah, %ah
	pushw	%ax
	movb	%bl, %al
	xorb	%ah, %ah
	divb	%cl
	movb	%al, %bl
	popw	%ax
	testb	%bl, %bl
	jnz	1b
	ret

tr_msg:		.asciz	"ap: apic id "
tr_nl:		.asciz	"\n"
	.balign	4
tr_lock:	.byte	0
	.balign	4
tr_count:	.word	0
tr_exit:	.byte	0			/* apexit code, set by the BSP */
trampoline_end:
	.code64

	.section .rodata
key:		.asciz	"cpus="
key_apexit:	.asciz	"apexit="
msg_start:	.asciz	"smp: INIT-SIPI-SIPI to all but self\n"
msg_smp:	.asciz	"smp: "
msg_up:		.asciz	" cpus up\n"
msg_timeout:	.asciz	"smp: timeout, "
msg_of:		.asciz	" of "
msg_timeout2:	.asciz	" APs up\n"
msg_noarg:	.asciz	"smp: no cpus=N (N >= 1) on the command line\n"

	.section .note.GNU-stack, "", @progbits
