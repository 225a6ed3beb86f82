package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/kinds"
)

// configureCompletion adjusts urfave/cli's 'completion' command: an unknown
// or missing shell is a usage error, and 'completion bash' prints the
// script of bashCompletion instead of urfave/cli's, which needs the
// bash-completion package and completes no values.
func configureCompletion(c *cli.Command) {
	c.Hidden = false
	c.Usage = "print a shell completion script (bash, zsh, fish, pwsh)"
	var shells []string
	for _, sub := range c.Commands {
		shells = append(shells, sub.Name)
		sub.OnUsageError = func(_ context.Context, _ *cli.Command, err error, _ bool) error { return usageError{err} }
		if sub.Name == "bash" {
			sub.Action = func(_ context.Context, cmd *cli.Command) error {
				_, err := fmt.Fprint(cmd.Root().Writer, bashCompletion(cmd.Root()))
				return err
			}
		}
	}
	c.OnUsageError = func(_ context.Context, _ *cli.Command, err error, _ bool) error { return usageError{err} }
	c.Action = func(_ context.Context, cmd *cli.Command) error {
		if cmd.Args().Present() {
			return usagef("completion: unknown shell %q; choose one of %s", cmd.Args().First(), strings.Join(shells, ", "))
		}
		return usagef("completion needs a shell: one of %s", strings.Join(shells, ", "))
	}
}

// completeCommand is what the bash script asks for the names that depend on
// the scenario file: 'retrysim __complete scenarios|policies [--file PATH]
// [--scenario NAME]' prints them one per line.
func completeCommand() *cli.Command {
	return &cli.Command{
		Name:   "__complete",
		Hidden: true,
		Usage:  "print scenario or policy names, for the bash completion",
		Flags:  []cli.Flag{fileFlag(), &cli.StringFlag{Name: "scenario"}},
		Action: func(_ context.Context, cmd *cli.Command) error {
			f, err := loadFile(newCall(cmd))
			if err != nil {
				return err
			}
			w := cmd.Root().Writer
			what := cmd.Args().First()
			if what == "scenarios" {
				for _, s := range f.Scenarios {
					fmt.Fprintln(w, s.Name)
				}
				return nil
			}
			name := cmd.String("scenario")
			if name == "" {
				name = f.Default
			}
			s, err := f.Lookup(name)
			if err != nil {
				return usageError{err}
			}
			switch what {
			case "policies":
				for _, p := range s.Policies {
					fmt.Fprintln(w, p.Name)
				}
			case "paths":
				for _, p := range s.NumericPaths() {
					fmt.Fprintln(w, p+"=")
				}
			default:
				return usagef("__complete: want scenarios, policies or paths, got %q", what)
			}
			return nil
		},
	}
}

// valueKinds says what the value of a flag is, by the flag's name, for the
// bash completion: "scenarios" and "policies" ask the binary, "params" are
// the sweep parameters, "files" and "dirs" are paths. A flag that takes a
// value and is not here (or a choiceFlag) gets no completion of its value.
var valueKinds = map[string]string{
	"scenario": "scenarios", "vs": "policies", "param": "params",
	"file": "files", "baseline": "files", "out": "files", "junit": "files", "shard-out": "files",
	"plot-dir": "dirs",
}

// argKinds says what the arguments of a command are.
var argKinds = map[string]string{"show": "scenarios", "merge": "files"}

// dashed returns a flag's names as typed: --name, -n.
func dashed(f cli.Flag) []string {
	var names []string
	for _, n := range f.Names() {
		if len(n) == 1 {
			names = append(names, "-"+n)
		} else {
			names = append(names, "--"+n)
		}
	}
	return names
}

// flagKind is what flag f takes: "" for none (a switch), "words A B ..."
// for one of fixed values, a valueKinds entry, or "value".
func flagKind(f cli.Flag) string {
	if c, ok := f.(*choiceFlag); ok {
		return "words " + strings.Join(c.choices, " ")
	}
	if v, ok := f.(cli.DocGenerationFlag); ok && !v.TakesValue() {
		return ""
	}
	if k, ok := valueKinds[f.Names()[0]]; ok {
		return k
	}
	return "value"
}

// bashCompletion returns the bash completion script of root's commands. It
// needs nothing but bash (3.2 or later): it splits no words with
// bash-completion's helpers, and puts back together the words bash splits
// at '=' and ':' (--format=json, clients=10:50:10) itself.
func bashCompletion(root *cli.Command) string {
	var commands, flagCases, kindCases, argCases strings.Builder
	help := []string{"--help", "-h"}
	// label is the case label of the command, name its name in "$1 $2".
	writeFlags := func(label, name string, flags []cli.Flag) {
		names := slices.Clone(help)
		for _, f := range flags {
			if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
				continue
			}
			for _, n := range dashed(f) {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
		fmt.Fprintf(&flagCases, "    %s) echo %q ;;\n", label, strings.Join(names, " "))
		for _, f := range flags {
			if k := flagKind(f); k != "" {
				var pats []string
				for _, n := range dashed(f) {
					pats = append(pats, fmt.Sprintf("%q", name+" "+n))
				}
				fmt.Fprintf(&kindCases, "    %s) echo %q ;;\n", strings.Join(pats, "|"), k)
			}
		}
	}
	writeFlags("''", "", root.Flags)
	var names []string
	for _, c := range root.VisibleCommands() {
		names = append(names, c.Names()...)
		for _, n := range c.Names() {
			// The root's flags (--quiet) are flags of every command too.
			writeFlags(n, n, append(slices.Clone(c.Flags), root.Flags...))
			kind := argKinds[c.Name]
			var subs []string // completion's shells (urfave/cli gives every command a help)
			for _, sub := range c.Commands {
				if sub.Name != "help" {
					subs = append(subs, sub.Name)
				}
			}
			if len(subs) > 0 {
				kind = "words " + strings.Join(subs, " ")
			}
			if kind != "" {
				fmt.Fprintf(&argCases, "    %s) echo %q ;;\n", n, kind)
			}
		}
	}
	commands.WriteString(strings.Join(names, " "))
	var params []string
	for _, p := range kinds.Params() {
		params = append(params, p.Name+"=")
	}
	r := strings.NewReplacer("@NAME@", root.Name, "@COMMANDS@", commands.String(), "@PARAMS@", strings.Join(params, " "),
		"@FLAGS@", flagCases.String(), "@KINDS@", kindCases.String(), "@ARGS@", argCases.String())
	return r.Replace(bashTemplate)
}

// bashTemplate is the script; @NAME@ and the other @...@ are filled in by
// bashCompletion.
const bashTemplate = `# bash completion for @NAME@, printed by '@NAME@ completion bash'.
# Load it with: source <(@NAME@ completion bash)
# It needs only bash, not the bash-completion package. It completes commands,
# flags, scenario names (of --file if the line has one), policy names (--vs),
# --format values, sweep parameters (--param) and file names.

# _@NAME@_flags CMD prints the flags of command CMD ('' for none).
_@NAME@_flags() {
  case $1 in
@FLAGS@  esac
}

# _@NAME@_kind CMD FLAG prints what FLAG of CMD takes (nothing for a switch
# or an unknown flag): words W..., scenarios, policies, params, files, dirs
# or value.
_@NAME@_kind() {
  case "$1 $2" in
@KINDS@  esac
}

# _@NAME@_args CMD prints what the arguments of CMD are.
_@NAME@_args() {
  case $1 in
@ARGS@  esac
}

_@NAME@() {
  COMPREPLY=()
  # Bash splits words at the characters of COMP_WORDBREAKS, '=' and ':'
  # among them: join "--format" "=" "js" back into "--format=js".
  local -a words=()
  local i x cword=0
  for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
    x=${COMP_WORDS[i]}
    if ((i > 0 && ${#words[@]} > 0)) && [[ $x == [=:] || ${COMP_WORDS[i-1]} == [=:] ]]; then
      words[${#words[@]}-1]+=$x
    else
      words+=("$x")
    fi
    if ((i == COMP_CWORD)); then cword=$((${#words[@]} - 1)); fi
  done
  local cur=${words[cword]}
  # Bash replaces only the part after the last break character; keep is
  # the part before it.
  local tail=${COMP_WORDS[COMP_CWORD]}
  [[ $tail == [=:] ]] && tail=
  local keep=${cur%"$tail"}

  # The command, and the --file and --scenario the line already gives.
  local cmd= file= scenario= kind value
  for ((i = 1; i < ${#words[@]}; i++)); do
    ((i == cword)) && continue
    x=${words[i]}
    case $x in
      -*=*) kind=$(_@NAME@_kind "$cmd" "${x%%=*}"); value=${x#*=} ;;
      -*)
        kind=$(_@NAME@_kind "$cmd" "$x"); value=
        if [[ -n $kind ]]; then
          ((i++))
          ((i != cword)) && value=${words[i]}
        fi
        ;;
      *) [[ -z $cmd ]] && cmd=$x; continue ;;
    esac
    [[ $kind == files ]] && [[ $x == --file* || $x == -f ]] && file=$value
    [[ $kind == scenarios ]] && scenario=$value
  done

  # What the word at the cursor is.
  local prefix= prev=
  ((cword > 1)) && prev=${words[cword-1]}
  kind=
  value=$cur
  if [[ $prev == -* && $prev != *=* ]] && kind=$(_@NAME@_kind "$cmd" "$prev") && [[ -n $kind ]]; then
    :
  elif [[ $cur == -*=* ]]; then
    kind=$(_@NAME@_kind "$cmd" "${cur%%=*}")
    prefix=${cur%%=*}=
    value=${cur#*=}
  elif [[ $cur == -* ]]; then
    kind="words $(_@NAME@_flags "$cmd")"
  elif [[ -z $cmd ]]; then
    kind="words @COMMANDS@"
  else
    kind=$(_@NAME@_args "$cmd")
  fi

  local list= c
  local -a found=()
  case $kind in
    words\ *) list=${kind#words } ;;
    params)
      [[ $value == *=* ]] && return 0
      list="@PARAMS@"
      # And the paths of the scenario's fields (server.phases[0].duration=).
      [[ $file != - ]] && list+=" "$("${COMP_WORDS[0]}" __complete paths ${file:+--file "$file"} ${scenario:+--scenario "$scenario"} 2>/dev/null)
      compopt -o nospace 2>/dev/null
      ;;
    scenarios | policies)
      # '-' would read the terminal.
      [[ $file == - ]] && return 0
      list=$("${COMP_WORDS[0]}" __complete "$kind" ${file:+--file "$file"} ${scenario:+--scenario "$scenario"} 2>/dev/null)
      ;;
    files | dirs)
      compopt -o filenames 2>/dev/null
      local opt=-f
      [[ $kind == dirs ]] && opt=-d
      while IFS= read -r c; do found+=("$c"); done < <(compgen $opt -- "$value")
      ;;
    *) return 0 ;;
  esac
  if [[ -n $list ]]; then
    while IFS= read -r c; do found+=("$c"); done < <(compgen -W "$list" -- "$value")
  fi
  for c in "${found[@]}"; do
    c=$prefix$c
    COMPREPLY+=("${c#"$keep"}")
  done
  return 0
}

complete -F _@NAME@ @NAME@
`
