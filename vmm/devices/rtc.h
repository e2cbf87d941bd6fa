/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GPIN_RTC_H
#define GPIN_RTC_H

#include <pthread.h>
#include <stdint.h>

#include "bus.h"

/*
 * A read-only MC146818 CMOS clock showing the host's UTC time.  Without
 * one Linux reads all ones, sees "update in progress" forever and waits
 * it out on every boot.
 */
struct rtc {
	pthread_mutex_t lock;
	uint8_t index;
};

int rtc__attach(struct rtc *rtc, struct bus *pio);

/* Register value for @index at time @t (pure; for tests). */
uint8_t rtc__reg(uint8_t index, int64_t t);

#endif /* GPIN_RTC_H */
