package fastnow

import (
	"errors"
	"fmt"
	"strings"
)

// An HLCTimestamp's text: RFC 3339 in UTC, a comma, and the counter. The
// reader is written out here rather than taken from time.Parse, so that it
// accepts exactly what the Rust crate's does (spec/vectors/hlc.json):
// time.Parse also takes a comma before the fraction, truncates digits past
// the ninth, and refuses a leap second, 't', 'z' and a space before the
// time, all of which differ from RFC 3339 or from the Rust reader.

// String returns the physical part as RFC 3339 in UTC with nine fraction
// digits (the first nanosecond of its unit), a comma, and the counter in
// five digits: "2024-02-29T12:34:56.123443604Z,00007". Every text is 36
// bytes, so the texts sort as the stamps do.
func (t HLCTimestamp) String() string {
	return fmt.Sprintf("%s,%05d", t.Time().Format("2006-01-02T15:04:05.000000000Z"), t.Logical())
}

// MarshalText returns String's text.
func (t HLCTimestamp) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads what MarshalText writes, as ParseHLCTimestamp does.
func (t *HLCTimestamp) UnmarshalText(text []byte) error {
	v, err := ParseHLCTimestamp(string(text))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// hlcExample is the text the errors show.
const hlcExample = "not an HLC timestamp (e.g. 2024-02-29T12:34:56.123443604Z,00007)"

// ParseHLCTimestamp reads the text String writes: an RFC 3339 date-time, a
// comma, and the counter in one to five decimal digits (0 to 65535).
//
// The date-time may have any offset (Z, z, +hh:mm, -hh:mm), T, t or a space
// before the time, and a fraction of any length provided the digits past
// the ninth are zeros (the time is exact or refused, never rounded); a leap
// second (:60) is the first second of the next minute, as in Unix time. The
// physical part is the unit (2^-16 s) that contains the time, as in
// NewHLCTimestamp: a text String wrote reads back as the same stamp, and a
// time written by hand reads as its unit. Times before 1970 or from
// 2106-02-07T06:28:16Z on are refused. The error says what was wrong and,
// for a syntax error, at which byte.
func ParseHLCTimestamp(s string) (HLCTimestamp, error) {
	comma := strings.LastIndexByte(s, ',')
	if comma < 0 {
		return 0, fmt.Errorf("%s: expected one to five digits of counter at byte %d", hlcExample, len(s))
	}
	nanos, err := parseRFC3339(s[:comma])
	if err != nil {
		return 0, fmt.Errorf("%s: %w", hlcExample, err)
	}
	digits := s[comma+1:]
	counter := 0
	for _, d := range []byte(digits) {
		if d < '0' || d > '9' {
			counter = -1
			break
		}
		counter = counter*10 + int(d-'0')
	}
	if len(digits) == 0 || len(digits) > 5 || counter < 0 {
		return 0, fmt.Errorf("%s: expected one to five digits of counter at byte %d", hlcExample, comma+1)
	}
	if counter > 0xffff {
		return 0, fmt.Errorf("%s: the counter %d is above 65535", hlcExample, counter)
	}
	if nanos >= hlcEndNanos {
		return 0, errors.New("the time is after 2106-02-07T06:28:15.999999999Z, the last an HLC timestamp holds (48 bits of 2^-16 s since 1970)")
	}
	return HLCTimestamp(hlcWordOfNanos(int64(nanos)) | uint64(counter)), nil
}

// rfc3339Reader reads an RFC 3339 date-time a byte at a time.
type rfc3339Reader struct {
	s   string
	at  int
	err error
}

// number reads exactly width ASCII digits.
func (r *rfc3339Reader) number(width int, what string) int {
	if r.err != nil {
		return 0
	}
	n := 0
	for i := 0; i < width; i++ {
		if r.at >= len(r.s) || r.s[r.at] < '0' || r.s[r.at] > '9' {
			r.err = fmt.Errorf("expected %s at byte %d", what, r.at-i)
			return 0
		}
		n = n*10 + int(r.s[r.at]-'0')
		r.at++
	}
	return n
}

// oneOf reads one of the bytes of allowed and returns it.
func (r *rfc3339Reader) oneOf(allowed, what string) byte {
	if r.err != nil {
		return 0
	}
	if r.at >= len(r.s) || strings.IndexByte(allowed, r.s[r.at]) < 0 {
		r.err = fmt.Errorf("expected %s at byte %d", what, r.at)
		return 0
	}
	r.at++
	return r.s[r.at-1]
}

// parseRFC3339 reads an RFC 3339 date-time (section 5.6) as Unix
// nanoseconds from 0 to 2^64 − 1, by the Rust crate's rules.
func parseRFC3339(s string) (uint64, error) {
	r := &rfc3339Reader{s: s}
	year := r.number(4, "a four-digit year")
	r.oneOf("-", "'-' after the year")
	month := r.number(2, "a two-digit month")
	r.oneOf("-", "'-' after the month")
	day := r.number(2, "a two-digit day")
	r.oneOf("Tt ", "'T' between date and time")
	hour := r.number(2, "a two-digit hour")
	r.oneOf(":", "':' after the hour")
	minute := r.number(2, "two-digit minutes")
	r.oneOf(":", "':' after the minutes")
	second := r.number(2, "two-digit seconds")
	nanos := 0
	if r.err == nil && r.at < len(s) && s[r.at] == '.' {
		r.at++
		start := r.at
		for r.at < len(s) && s[r.at] >= '0' && s[r.at] <= '9' {
			place := r.at - start
			if place < 9 {
				nanos = nanos*10 + int(s[r.at]-'0')
			} else if s[r.at] != '0' {
				return 0, errors.New("the time is more precise than a nanosecond (digits past the ninth of the fraction must be 0)")
			}
			r.at++
		}
		if r.at == start {
			return 0, fmt.Errorf("expected a digit after '.' at byte %d", start)
		}
		for place := r.at - start; place < 9; place++ {
			nanos *= 10
		}
	}
	offset := 0
	switch r.oneOf("Zz+-", "'Z' or an offset such as +01:00") {
	case '+', '-':
		sign := s[r.at-1]
		oh := r.number(2, "a two-digit offset hour")
		r.oneOf(":", "':' in the offset")
		om := r.number(2, "two-digit offset minutes")
		if r.err == nil && oh > 23 {
			return 0, fmt.Errorf("offset hour %02d is out of range", oh)
		}
		if r.err == nil && om > 59 {
			return 0, fmt.Errorf("offset minute %02d is out of range", om)
		}
		offset = oh*60 + om
		if sign == '-' {
			offset = -offset
		}
	}
	if r.err != nil {
		return 0, r.err
	}
	if r.at != len(s) {
		return 0, fmt.Errorf("expected the end of the date-time at byte %d", r.at)
	}
	switch {
	case month < 1 || month > 12:
		return 0, fmt.Errorf("month %02d is out of range", month)
	case day < 1 || day > daysIn(year, month):
		return 0, fmt.Errorf("%04d-%02d has no day %02d", year, month, day)
	case hour > 23:
		return 0, fmt.Errorf("hour %02d is out of range", hour)
	case minute > 59:
		return 0, fmt.Errorf("minute %02d is out of range", minute)
	case second > 60:
		return 0, fmt.Errorf("second %02d is out of range", second)
	}
	secs := daysFromCivil(year, month, day)*86_400 + int64(hour*3600+minute*60+second) - int64(offset)*60
	// Years 0 to 9999: secs is within ±2^39, so this cannot overflow.
	if secs < 0 {
		return 0, errors.New("the time is before 1970-01-01T00:00:00Z")
	}
	if uint64(secs) > (1<<64-1-uint64(nanos))/hlcNanosPerSec {
		return 0, errors.New("the time is after 2554-07-21T23:34:33.709551615Z")
	}
	return uint64(secs)*hlcNanosPerSec + uint64(nanos), nil
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the day count since 1970-01-01 of a proleptic Gregorian
// date (March-first eras of 400 years, as the Rust crate counts).
func daysFromCivil(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yearOfEra := y - era*400
	dayOfYear := (153*int64((month+9)%12)+2)/5 + int64(day) - 1
	dayOfEra := 365*yearOfEra + yearOfEra/4 - yearOfEra/100 + dayOfYear
	return era*146_097 + dayOfEra - 719_468
}
