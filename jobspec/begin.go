package jobspec

import (
	"fmt"
	"strings"
	"time"
)

// beginHint is the one-line explanation every bad --begin gets.
const beginHint = "use HH:MM[:SS] [AM|PM], YYYY-MM-DD[THH:MM[:SS]], MMDD[YY], MM/DD[/YY], " +
	"now[+N[seconds|minutes|hours|days|weeks]], today, tomorrow, midnight, noon, elevenses, fika or teatime"

// ParseBegin reads a --begin time as sbatch does and resolves it against
// now, in now's location. The parts may be combined ("tomorrow 10:00",
// "2026-03-01T08:00", "12/24-18:00", "teatime tomorrow"):
//
//   - now[{+|-}N[unit]]: N seconds (or minutes, hours, days, weeks) from now;
//   - today, tomorrow: that day at midnight unless a time is given;
//   - midnight, noon, elevenses (11:00), fika (15:00), teatime (16:00), or
//     HH:MM[:SS] with an optional AM or PM;
//   - YYYY-MM-DD, MMDD[YY], MM/DD[/YY] or MM.DD[.YY].
//
// A time without a date is the next such time: today if it is still ahead
// (by the minute), tomorrow otherwise. A date without a year is this year
// if still ahead, else next year. A date without a time is its midnight.
// "uts<seconds>" is a Unix time stamp. ParseBegin does no I/O and reads no
// clock: the same text and now always give the same time.
func ParseBegin(s string, now time.Time) (time.Time, error) {
	t, err := parseBegin(s, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid --begin %s: %v", quoteValue(s), err)
	}
	return t, nil
}

// beginParts collects what a --begin text names; -1 means not given.
type beginParts struct {
	year, month, day     int // month 1-12; year -1 when not given
	hour, minute, second int
	haveDate, haveTime   bool
}

func parseBegin(s string, now time.Time) (time.Time, error) {
	if len(s) > 100 {
		return time.Time{}, fmt.Errorf("too long: %s", beginHint)
	}
	if rest, ok := cutPrefixFold(s, "uts"); ok {
		n, ok := parseCount(rest)
		if !ok || n < 1000000 {
			return time.Time{}, fmt.Errorf("uts needs a Unix time in seconds")
		}
		return time.Unix(n, 0).In(now.Location()), nil
	}
	p := beginParts{year: -1}
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\t' || c == '-' || c == 'T' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			i++ // separators, as in 2026-01-20T12:34 or 12/24-18:00
			continue
		}
		n, err := p.word(s[i:], now)
		if err != nil {
			return time.Time{}, err
		}
		i += n
	}
	if !p.haveDate && !p.haveTime {
		return time.Time{}, fmt.Errorf("no date or time: %s", beginHint)
	}
	return p.resolve(now)
}

// word reads one part at the start of s and returns its length.
func (p *beginParts) word(s string, now time.Time) (int, error) {
	for _, w := range []struct {
		name string
		hour int
	}{{"midnight", 0}, {"noon", 12}, {"elevenses", 11}, {"fika", 15}, {"teatime", 16}} {
		if _, ok := cutPrefixFold(s, w.name); ok {
			return len(w.name), p.setTime(w.hour, 0, 0)
		}
	}
	if _, ok := cutPrefixFold(s, "today"); ok {
		return 5, p.setDate(now.Year(), int(now.Month()), now.Day())
	}
	if _, ok := cutPrefixFold(s, "tomorrow"); ok {
		t := now.AddDate(0, 0, 1)
		return 8, p.setDate(t.Year(), int(t.Month()), t.Day())
	}
	if rest, ok := cutPrefixFold(s, "now"); ok {
		delta, n, err := parseDelta(rest)
		if err != nil {
			return 0, err
		}
		t := now.Add(delta)
		if err := p.setDate(t.Year(), int(t.Month()), t.Day()); err != nil {
			return 0, err
		}
		return 3 + n, p.setTime(t.Hour(), t.Minute(), t.Second())
	}
	if s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("unexpected %s: %s", quoteValue(s), beginHint)
	}
	if len(s) > 1 && s[1] == ':' || len(s) > 2 && s[2] == ':' {
		return p.clock(s)
	}
	return p.date(s)
}

func (p *beginParts) setDate(year, month, day int) error {
	if p.haveDate {
		return fmt.Errorf("more than one date: %s", beginHint)
	}
	p.year, p.month, p.day, p.haveDate = year, month, day, true
	return nil
}

func (p *beginParts) setTime(hour, minute, second int) error {
	if p.haveTime {
		return fmt.Errorf("more than one time of day: %s", beginHint)
	}
	p.hour, p.minute, p.second, p.haveTime = hour, minute, second, true
	return nil
}

// maxDelta bounds now+N: a century is more than any queue will wait.
const maxDelta = 100 * 366 * 86400

// parseDelta reads what follows "now": nothing, or {+|-}N[unit] with
// optional blanks; N without a unit is seconds.
func parseDelta(s string) (time.Duration, int, error) {
	i := skipBlanks(s, 0)
	if i == len(s) || (s[i] != '+' && s[i] != '-') {
		return 0, 0, nil // plain "now"; whatever follows is another part
	}
	sign := s[i]
	i = skipBlanks(s, i+1)
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, ok := parseCount(s[start:i])
	if !ok {
		return 0, 0, fmt.Errorf("now%c needs a count, as in now+1hour", sign)
	}
	i = skipBlanks(s, i)
	unit := int64(1)
	for _, u := range []struct {
		name    string
		seconds int64
	}{
		{"seconds", 1}, {"second", 1}, {"minutes", 60}, {"minute", 60}, {"hours", 3600}, {"hour", 3600},
		{"days", 86400}, {"day", 86400}, {"weeks", 7 * 86400}, {"week", 7 * 86400},
	} {
		if hasPrefixFold(s[i:], u.name) {
			unit = u.seconds
			i += len(u.name)
			break
		}
	}
	if n > maxDelta/unit {
		return 0, 0, fmt.Errorf("now%c%s is more than 100 years away", sign, s[start:i])
	}
	d := time.Duration(n*unit) * time.Second
	if sign == '-' {
		d = -d
	}
	return d, i, nil
}

// clock reads HH:MM[:SS] [AM|PM].
func (p *beginParts) clock(s string) (int, error) {
	bad := func() (int, error) {
		return 0, fmt.Errorf("bad time of day %s: use HH:MM[:SS] with an optional AM or PM", quoteValue(s))
	}
	i := 0
	hour, ok := digitsAt(s, &i, 1, 2)
	if !ok || i >= len(s) || s[i] != ':' {
		return bad()
	}
	i++
	minute, ok := digitsAt(s, &i, 2, 2)
	if !ok {
		return bad()
	}
	second := 0
	if i < len(s) && s[i] == ':' {
		i++
		if second, ok = digitsAt(s, &i, 2, 2); !ok {
			return bad()
		}
	}
	if hour > 23 || minute > 59 || second > 59 {
		return bad()
	}
	j := skipBlanks(s, i)
	switch {
	case hasPrefixFold(s[j:], "am"):
		if hour > 12 {
			return bad()
		}
		hour %= 12
		i = j + 2
	case hasPrefixFold(s[j:], "pm"):
		if hour > 12 {
			return bad()
		}
		hour = hour%12 + 12
		i = j + 2
	}
	return i, p.setTime(hour, minute, second)
}

// date reads YYYY-MM-DD, MMDD[YY], MM/DD[/YY] or MM.DD[.YY].
func (p *beginParts) date(s string) (int, error) {
	bad := func() (int, error) {
		return 0, fmt.Errorf("bad date %s: use YYYY-MM-DD, MMDD[YY], MM/DD[/YY] or MM.DD[.YY]", quoteValue(s))
	}
	i := 0
	if len(s) >= 8 && s[4] == '-' && (s[7] == '-' || s[6] == '-') {
		year, ok := digitsAt(s, &i, 4, 4)
		i++ // the '-'
		month, ok2 := digitsAt(s, &i, 1, 2)
		if !ok || !ok2 || i >= len(s) || s[i] != '-' {
			return bad()
		}
		i++
		day, ok := digitsAt(s, &i, 1, 2)
		if !ok || !validDate(year, month, day) {
			return bad()
		}
		return i, p.setDate(year, month, day)
	}
	month, ok := digitsAt(s, &i, 1, 2)
	if !ok {
		return bad()
	}
	sep := byte(0)
	if i < len(s) && (s[i] == '/' || s[i] == '.') {
		sep = s[i]
		i++
	}
	day, ok := digitsAt(s, &i, 1, 2)
	if !ok || month < 1 || month > 12 || day < 1 || day > 31 {
		return bad()
	}
	year := -1
	if sep != 0 && i < len(s) && s[i] == sep {
		i++
		if year, ok = digitsAt(s, &i, 2, 2); !ok {
			return bad()
		}
		year += 2000
	} else if sep == 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if year, ok = digitsAt(s, &i, 2, 2); !ok {
			return bad()
		}
		year += 2000
	}
	if i < len(s) && s[i] >= '0' && s[i] <= '9' {
		return bad()
	}
	if year >= 0 && !validDate(year, month, day) {
		return bad()
	}
	return i, p.setDate(year, month, day)
}

// resolve fills in what was left out, as sbatch does, and checks the day
// exists.
func (p *beginParts) resolve(now time.Time) (time.Time, error) {
	if !p.haveTime {
		p.hour, p.minute, p.second = 0, 0, 0
	}
	if !p.haveDate {
		day := now
		if p.hour < now.Hour() || p.hour == now.Hour() && p.minute <= now.Minute() {
			day = now.AddDate(0, 0, 1)
		}
		p.year, p.month, p.day = day.Year(), int(day.Month()), day.Day()
	}
	if p.year < 0 {
		p.year = now.Year()
		m, d := int(now.Month()), now.Day()
		ahead := p.month > m || p.month == m && (p.day > d || p.day == d &&
			(p.hour > now.Hour() || p.hour == now.Hour() && p.minute > now.Minute()))
		if !ahead {
			p.year++
		}
	}
	if !validDate(p.year, p.month, p.day) {
		return time.Time{}, fmt.Errorf("%04d-%02d-%02d is not a date", p.year, p.month, p.day)
	}
	return time.Date(p.year, time.Month(p.month), p.day, p.hour, p.minute, p.second, 0, now.Location()), nil
}

func validDate(year, month, day int) bool {
	if month < 1 || month > 12 || day < 1 || year < 1970 || year > 9999 {
		return false
	}
	return day <= time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// digitsAt reads between min and max decimal digits at s[*i:].
func digitsAt(s string, i *int, min, max int) (int, bool) {
	n, j := 0, *i
	for j < len(s) && j-*i < max && s[j] >= '0' && s[j] <= '9' {
		n = n*10 + int(s[j]-'0')
		j++
	}
	if j-*i < min {
		return 0, false
	}
	*i = j
	return n, true
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if hasPrefixFold(s, prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// quoteValue shows a user's value in an error: quoted, on one line.
func quoteValue(s string) string {
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return fmt.Sprintf("%q", s)
}
