//go:build js && wasm

// Command wasm is the engine of 'retrysim playground' for the browser
// (GOOS=js GOARCH=wasm): it sets globalThis.retrysimCall(method, json) to
// playground.Call and waits for calls. The page's worker loads it; in a
// worker, runs post their progress to the page.
package main

import (
	"context"
	"syscall/js"

	"github.com/retrysim/retrysim/playground"
)

func main() {
	// In a Web Worker, a run's progress goes to the page as it goes, as
	// {progress: fraction} messages.
	ctx := context.Background()
	if post := js.Global().Get("postMessage"); post.Type() == js.TypeFunction && js.Global().Get("document").IsUndefined() {
		ctx = playground.WithProgress(ctx, func(f float64) {
			post.Invoke(js.ValueOf(map[string]any{"progress": f}))
		})
	}
	js.Global().Set("retrysimCall", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 {
			return `{"error":"retrysimCall takes a method and a JSON argument"}`
		}
		return playground.Call(ctx, args[0].String(), args[1].String())
	}))
	select {}
}
