// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>
#include <time.h>

#include "arch/x86/layout.h"
#include "rtc.h"

#define RTC_SECONDS		0x00
#define RTC_MINUTES		0x02
#define RTC_HOURS		0x04
#define RTC_DAY_OF_WEEK		0x06
#define RTC_DAY_OF_MONTH	0x07
#define RTC_MONTH		0x08
#define RTC_YEAR		0x09
#define RTC_REG_A		0x0a
#define RTC_REG_B		0x0b
#define RTC_REG_C		0x0c
#define RTC_REG_D		0x0d
#define RTC_CENTURY		0x32

#define RTC_REG_A_DIVIDER	0x26	/* 32.768 kHz, 1024 Hz rate; UIP clear */
#define RTC_REG_B_24H		0x02	/* 24-hour, BCD, no interrupts */
#define RTC_REG_D_VRT		0x80	/* battery good, time valid */

static uint8_t bcd(int v)
{
	return (uint8_t)(((v / 10) << 4) | (v % 10));
}

uint8_t rtc__reg(uint8_t index, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	switch (index) {
	case RTC_SECONDS:	return bcd(tm.tm_sec);
	case RTC_MINUTES:	return bcd(tm.tm_min);
	case RTC_HOURS:		return bcd(tm.tm_hour);
	case RTC_DAY_OF_WEEK:	return bcd(tm.tm_wday + 1);
	case RTC_DAY_OF_MONTH:	return bcd(tm.tm_mday);
	case RTC_MONTH:		return bcd(tm.tm_mon + 1);
	case RTC_YEAR:		return bcd(tm.tm_year % 100);
	case RTC_CENTURY:	return bcd((tm.tm_year + 1900) / 100);
	case RTC_REG_A:		return RTC_REG_A_DIVIDER;
	case RTC_REG_B:		return RTC_REG_B_24H;
	case RTC_REG_D:		return RTC_REG_D_VRT;
	}
	return 0;	/* REG_C (no interrupt flags) and CMOS RAM */
}

static void rtc_read(void *opaque, uint64_t offset, void *data,
		     unsigned int len)
{
	struct rtc *rtc = opaque;
	uint8_t v = 0xff;

	if (offset == 1) {
		pthread_mutex_lock(&rtc->lock);
		v = rtc__reg(rtc->index, time(NULL));
		pthread_mutex_unlock(&rtc->lock);
	}
	memset(data, v, len);
}

static void rtc_write(void *opaque, uint64_t offset, const void *data,
		      unsigned int len)
{
	struct rtc *rtc = opaque;

	/* Bit 7 of the index port is the NMI mask: not a register bit. */
	if (offset == 0) {
		pthread_mutex_lock(&rtc->lock);
		rtc->index = *(const uint8_t *)data & 0x7f;
		pthread_mutex_unlock(&rtc->lock);
	}
}

static const struct bus_dev_ops rtc_ops = {
	.read = rtc_read,
	.write = rtc_write,
};

int rtc__attach(struct rtc *rtc, struct bus *pio)
{
	pthread_mutex_init(&rtc->lock, NULL);
	rtc->index = 0;
	return bus__register(pio, PORT_RTC_INDEX, PORT_RTC_LEN, &rtc_ops, rtc);
}
