package main

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v3"
)

// decimalFlag is a flag whose value is a non-negative integer written in
// plain decimal digits. The standard integer flags also take 0x10 (hex),
// 010 (octal) and 1_000; for a seed, 010 meaning 8 would silently run
// another experiment, so retrysim refuses all of those. Read it with
// cmd.Uint64.
type decimalFlag = cli.FlagBase[uint64, cli.NoConfig, decimalValue]

// decimalValue is the flag.Value of a decimalFlag.
type decimalValue struct{ p *uint64 }

func (decimalValue) Create(v uint64, p *uint64, _ cli.NoConfig) cli.Value {
	*p = v
	return &decimalValue{p}
}

func (decimalValue) ToString(v uint64) string { return strconv.FormatUint(v, 10) }

func (d *decimalValue) Set(s string) error {
	v, err := parseDecimal(s)
	if err != nil {
		return err
	}
	*d.p = v
	return nil
}

func (d *decimalValue) Get() any { return *d.p }

func (d *decimalValue) String() string {
	if d.p == nil {
		return "0"
	}
	return strconv.FormatUint(*d.p, 10)
}

// parseDecimal reads a non-negative integer in decimal digits, without
// sign, base prefix, leading zero or digit separator.
func parseDecimal(s string) (uint64, error) {
	switch {
	case s == "":
		return 0, errors.New("must be a non-negative integer, got nothing")
	case s[0] == '-':
		return 0, errors.New("must be a non-negative integer")
	case strings.Trim(s, "0123456789") != "":
		return 0, errors.New("must be a non-negative integer in decimal digits (no sign, 0x, or _)")
	case len(s) > 1 && s[0] == '0':
		return 0, errors.New("must be written in decimal without a leading zero (010 would be octal elsewhere)")
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.New("is too large (at most 18446744073709551615)")
	}
	return v, nil
}

// Help layout: every line of every --help fits helpWidth columns. A flag's
// names take the first nameWidth columns after the indent, its usage the
// rest, wrapped; names wider than that get a line of their own.
const (
	helpWidth  = 80
	helpIndent = 3 // what urfave/cli puts before every flag line
	nameWidth  = 26
	usageCol   = nameWidth + 2 // from the indent
	contIndent = 6             // what urfave/cli puts before continuation lines
)

// flagHelp is the FlagStringFunc of every retrysim flag: urfave/cli's own
// text ("names\tusage"), laid out in two columns that fit helpWidth.
func flagHelp(f cli.Flag) string {
	names, usage, _ := strings.Cut(cli.FlagStringer(f), "\t")
	// A repeatable flag is shown once; its usage says it repeats.
	names, _, _ = strings.Cut(names, " [ ")
	lines := wrapWords(usage, helpWidth-helpIndent-usageCol)
	var b strings.Builder
	b.WriteString(names)
	first := 0
	if utf8.RuneCountInString(names) <= nameWidth && len(lines) > 0 {
		b.WriteString(strings.Repeat(" ", usageCol-utf8.RuneCountInString(names)))
		b.WriteString(lines[0])
		first = 1
	}
	for _, l := range lines[first:] {
		b.WriteString("\n" + strings.Repeat(" ", helpIndent+usageCol-contIndent) + l)
	}
	return b.String()
}

// wrapWords splits text into lines of at most width runes, breaking at
// spaces (a longer word gets a line of its own).
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// useFlagHelp gives every flag of cmd and its subcommands the flagHelp
// layout.
func useFlagHelp(cmd *cli.Command) {
	for _, f := range cmd.Flags {
		if s, ok := f.(cli.StringerSetter); ok {
			s.SetStringer(flagHelp)
		}
	}
	for _, c := range cmd.Commands {
		useFlagHelp(c)
	}
}

func init() {
	// urfave/cli copies HelpFlag into every command when it runs; this copy
	// carries the same layout as the other flags. (Set once, before main.)
	help := &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}
	help.SetStringer(flagHelp)
	cli.HelpFlag = help
}
