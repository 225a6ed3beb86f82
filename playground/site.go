package playground

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// web holds the page: index.html, app.js (the controls, the URL, the
// copies) and worker.js (which runs the engine on a Web Worker).
//
//go:embed web
var web embed.FS

// The engine's files beside the page's.
const (
	// EngineFile is the engine compiled to WebAssembly (package
	// playground/wasm).
	EngineFile = "retrysim.wasm"
	// WasmExecFile is the Go distribution's JavaScript support for it,
	// from the toolchain that compiled the engine.
	WasmExecFile = "wasm_exec.js"
	// EnginePackage is the package that EngineFile is built from.
	EnginePackage = "github.com/retrysim/retrysim/playground/wasm"
)

// A Site is the page's files by name: what the playground serves and
// what --out writes. It is static: any file server can serve it.
type Site map[string][]byte

// NewSite is the page with engine (EngineFile's bytes) and wasmExec
// (WasmExecFile's).
func NewSite(engine, wasmExec []byte) (Site, error) {
	s := Site{EngineFile: engine, WasmExecFile: wasmExec}
	err := fs.WalkDir(web, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := web.ReadFile(p)
		s[strings.TrimPrefix(p, "web/")] = data
		return err
	})
	return s, err
}

// Names are the site's file names, sorted.
func (s Site) Names() []string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ServeHTTP serves the site's files, index.html at /.
func (s Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	data, ok := s[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	// The engine and the page change together: never serve a stale pair.
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

// BuildEngine compiles EnginePackage for the browser (GOOS=js
// GOARCH=wasm) into out with the go command on PATH, in dir, which must be
// inside a checkout of this module (or of a module that requires it).
func BuildEngine(ctx context.Context, dir, out string) error {
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, EnginePackage)
	build.Dir = dir
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if msg, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("compiling the engine for the browser (GOOS=js GOARCH=wasm go build %s) needs the go command and retrysim's source: run it in a checkout, or give the engine with --wasm: %v\n%s",
			EnginePackage, err, bytes.TrimSpace(msg))
	}
	return nil
}

// ModulePath is the module that EnginePackage belongs to.
const ModulePath = "github.com/retrysim/retrysim"

// ModuleDir returns the directory of ModulePath at version in the module
// cache, fetched by the go command on PATH as for go install (GOPROXY,
// GOFLAGS and the rest from the environment): the source that a binary
// installed with 'go install ...@version' was built from, so that it can
// compile its engine outside a checkout.
func ModuleDir(ctx context.Context, version string) (string, error) {
	dl := exec.CommandContext(ctx, "go", "mod", "download", "-json", ModulePath+"@"+version)
	dl.Dir = os.TempDir() // outside any module: the binary's version, not a go.mod's
	out, err := dl.Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr == nil && m.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", ModulePath, version, m.Error)
	}
	if err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %v", ModulePath, version, err)
	}
	return m.Dir, nil
}

// WasmExec returns the JavaScript support of the go command on PATH
// (WasmExecFile), which must be that of the toolchain that compiled the
// engine.
func WasmExec(ctx context.Context) ([]byte, error) {
	root, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT (for %s): %v", WasmExecFile, err)
	}
	p := filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", WasmExecFile)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("the Go distribution's %s: %v", WasmExecFile, err)
	}
	return data, nil
}
