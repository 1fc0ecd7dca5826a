package views

import (
	"strconv"
	"strings"
)

// problems counts a file's problems in words.
func problems(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return strconv.Itoa(n) + " problems"
}

// humanize turns a checkpoint kind like "strategy_confirmation" into words.
func humanize(s string) string { return strings.ReplaceAll(s, "_", " ") }
