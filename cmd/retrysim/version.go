package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v3"
)

// buildVersion describes this binary from the information the Go toolchain
// records in it: the module version ("devel" for a build from a checkout
// that carries none), the VCS commit and time ("unknown" when the build
// recorded no VCS information, as with go run and go test), and the Go
// version.
type buildVersion struct {
	module, commit, goVersion string
	modified                  bool
}

func readBuildVersion() buildVersion {
	v := buildVersion{module: "devel", commit: "unknown", goVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		v.module = mv
	}
	if bi.GoVersion != "" {
		v.goVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.commit = s.Value
		case "vcs.time":
			if v.commit != "unknown" {
				v.commit += " (" + s.Value + ")"
			}
		case "vcs.modified":
			v.modified = s.Value == "true"
		}
	}
	return v
}

// write prints the version on three lines.
func (v buildVersion) write(w io.Writer) {
	fmt.Fprintf(w, "retrysim %s\n", v.module)
	commit := v.commit
	if commit == "unknown" {
		commit += " (no VCS information in this build, as with go run)"
	} else if v.modified {
		commit += ", with uncommitted changes"
	}
	fmt.Fprintf(w, "commit:  %s\n", commit)
	fmt.Fprintf(w, "go:      %s %s/%s\n", v.goVersion, runtime.GOOS, runtime.GOARCH)
}

// short is the version on one line, for a page that says what made it:
// "retrysim devel, commit unknown".
func (v buildVersion) short() string {
	s := "retrysim " + v.module + ", commit " + v.commit
	if v.modified {
		s += " (with uncommitted changes)"
	}
	return s
}

func init() {
	// Set once, before main: urfave/cli reads these globals when --version
	// is given.
	version := &cli.BoolFlag{Name: "version", Usage: "print the version, VCS commit and Go version"}
	version.SetStringer(flagHelp)
	cli.VersionFlag = version
	cli.VersionPrinter = func(cmd *cli.Command) { readBuildVersion().write(cmd.Root().Writer) }
}
