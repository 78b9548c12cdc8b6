package dsl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// errNotWholeMinutes is parseTimeLimit's error for a limit Slurm would
// round up to the next minute.
var errNotWholeMinutes = errors.New("not whole minutes")

// parseTimeLimit reads a Slurm time limit: a Go duration ("30m", "4h") or
// one of sbatch --time's own forms: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM and
// D-HH:MM:SS. The limit must be at least a minute, in whole minutes,
// because Slurm counts in minutes.
func parseTimeLimit(s string) (time.Duration, error) {
	d, err := parseSlurmTime(s)
	if err != nil {
		d, err = time.ParseDuration(s)
	}
	switch {
	case err != nil:
		return 0, err
	case d < time.Minute || d%time.Minute != 0:
		return 0, errNotWholeMinutes
	}
	return d, nil
}

// parseSlurmTime reads sbatch --time's forms. Only the leading field may
// exceed its unit's range (90 minutes is fine as "90", not as "1:90:00").
func parseSlurmTime(s string) (time.Duration, error) {
	days, rest, withDays := strings.Cut(s, "-")
	if !withDays {
		rest = s
	}
	fields := strings.Split(rest, ":")
	units := clockUnits(len(fields), withDays)
	if units == nil {
		return 0, fmt.Errorf("%q is not a Slurm time", s)
	}
	var total time.Duration
	if withDays {
		n, err := timeField(days, -1)
		if err != nil {
			return 0, err
		}
		total = time.Duration(n) * 24 * time.Hour
	}
	for i, f := range fields {
		limit := unitLimit(units[i])
		if i == 0 && !withDays {
			limit = -1
		}
		n, err := timeField(f, limit)
		if err != nil {
			return 0, err
		}
		total += time.Duration(n) * units[i]
	}
	return total, nil
}

// clockUnits gives the unit of each colon-separated field: MM, MM:SS and
// HH:MM:SS without days; HH, HH:MM and HH:MM:SS after "D-".
func clockUnits(n int, withDays bool) []time.Duration {
	switch {
	case withDays && n <= 3:
		return []time.Duration{time.Hour, time.Minute, time.Second}[:n]
	case n == 1 || n == 2:
		return []time.Duration{time.Minute, time.Second}[:n]
	case n == 3:
		return []time.Duration{time.Hour, time.Minute, time.Second}
	}
	return nil
}

func unitLimit(unit time.Duration) int {
	if unit == time.Hour {
		return 24
	}
	return 60
}

// timeField reads one field of digits, below limit unless limit is -1.
func timeField(f string, limit int) (int, error) {
	if f == "" || strings.Trim(f, "0123456789") != "" || len(f) > 6 {
		return 0, fmt.Errorf("%q is not a number of up to 6 digits", f)
	}
	n, _ := strconv.Atoi(f)
	if limit >= 0 && n >= limit {
		return 0, fmt.Errorf("%d is out of range (below %d)", n, limit)
	}
	return n, nil
}
